"""The keys ``scontrol update`` of a job knows, matched as Slurm 22.05 matches them.

Each key is a case-insensitive abbreviation of a minimum length, tried in
Slurm's order (so ``D`` is Dependency, ``De`` too, ``Dea`` Deadline).

Pure; imports nothing of ours.
"""

from __future__ import annotations

# Slurm's keys in its order of matching: (key, shortest abbreviation, what it means here).
KEYS: tuple[tuple[str, int, str], ...] = (
    ("JobId", 3, "JobId"),
    ("AdminComment", 6, ""),
    ("SiteFactor", 5, ""),
    ("ArrayTaskThrottle", 10, "ArrayTaskThrottle"),
    ("Comment", 3, "Comment"),
    ("Clusters", 8, ""),
    ("ClusterFeatures", 8, ""),
    ("DelayBoot", 5, ""),
    ("TimeLimit", 5, "TimeLimit"),
    ("TimeMin", 5, ""),
    ("Priority", 2, "Priority"),
    ("Nice", 2, "Nice"),
    ("CPUsPerTask", 9, ""),
    ("CpusPerTres", 9, ""),
    ("NumCPUs", 6, ""),
    ("NumTasks", 8, "NumTasks"),
    ("ReqProcs", 8, "NumTasks"),
    ("Requeue", 4, "Requeue"),
    ("ReqNodes", 8, "NumNodes"),
    ("NumNodes", 8, "NumNodes"),
    ("ReqSockets", 4, ""),
    ("ReqCores", 4, ""),
    ("TasksPerNode", 2, ""),
    ("ReqThreads", 4, ""),
    ("MinCPUsNode", 4, ""),
    ("MinMemoryNode", 10, ""),
    ("MinMemoryCPU", 10, ""),
    ("MinTmpDiskNode", 5, ""),
    ("Partition", 2, "Partition"),
    ("QOS", 2, "QOS"),
    ("ReservationName", 3, "ReservationName"),
    ("Name", 2, "Name"),
    ("JobName", 4, "Name"),
    ("WCKey", 1, ""),
    ("StdOut", 6, ""),
    ("Switches", 5, ""),
    ("wait-for-switch", 5, ""),
    ("OverSubscribe", 2, ""),
    ("Shared", 2, ""),
    ("Contiguous", 3, ""),
    ("CoreSpec", 4, ""),
    ("MemPerTres", 5, ""),
    ("ThreadSpec", 4, ""),
    ("TresBind", 5, ""),
    ("TresFreq", 5, ""),
    ("TresPerJob", 8, ""),
    ("TresPerNode", 8, ""),
    ("TresPerSocket", 8, ""),
    ("TresPerTask", 8, ""),
    ("ExcNodeList", 3, "ExcNodeList"),
    ("NodeList", 8, "ReqNodeList"),
    ("ReqNodeList", 8, "ReqNodeList"),
    ("Features", 1, ""),
    ("Prefer", 3, ""),
    ("Gres", 2, "Gres"),
    ("Account", 1, "Account"),
    ("BurstBuffer", 1, ""),
    ("Dependency", 1, "Dependency"),
    ("Licenses", 1, ""),
    ("EligibleTime", 2, "StartTime"),
    ("StartTime", 2, "StartTime"),
    ("EndTime", 2, ""),
    ("Reboot", 3, ""),
    ("UserID", 3, "UserID"),
    ("Deadline", 3, "Deadline"),
    ("WorkDir", 2, "WorkDir"),
    ("MailType", 5, "MailType"),
    ("MailUser", 5, "MailUser"),
)


def named(word: str, keyword: str, minimum: int) -> bool:
    """Slurm's abbreviation rule: a case-insensitive prefix of ``keyword``, ``minimum`` long.

    Args:
        word: what the user typed.
        keyword: the full keyword.
        minimum: the shortest accepted abbreviation.

    Returns:
        True when ``word`` names ``keyword``.
    """
    return len(word) >= minimum and keyword.lower().startswith(word.lower())


def key_meaning(tag: str) -> str | None:
    """What a key names here: a supported key's name, "" for one Slurm knows that we do not.

    Args:
        tag: the key as typed.

    Returns:
        The meaning; None for a key Slurm does not know either.
    """
    for keyword, minimum, meaning in KEYS:
        if named(tag, keyword, minimum):
            return meaning
    return None
