"""The controller's accounting: associations, QOS, fair share, privileges and sacct's records.

``manager`` holds the association book (:mod:`minislurm.accounts`) and usage for
the controller; ``assoc`` (sacctmgr's settings), ``assocedit``, ``qos``,
``fairshare`` and ``privileges`` are pure functions of that book; ``records``,
``runs``, ``filters`` and ``query`` answer sacct; ``show`` answers sacctmgr
show, sshare and sprio.
"""
