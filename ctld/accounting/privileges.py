"""Who may act for others: root, SlurmUser, and the users' AdminLevel in accounting.

Slurm keeps no list of operators in slurm.conf; each accounting user has an
``AdminLevel`` (``None``, ``Operator`` or ``Administrator``, set with
``sacctmgr modify user NAME set AdminLevel=...``), and root and SlurmUser
are always administrators. An operator may cancel, hold, update, requeue
and signal anyone's jobs, manage reservations and change accounts; only an
administrator may also update nodes and change AdminLevels.

:class:`Privileges` answers those questions by uid. It is a
``Container[int]`` of the uids that are at least operators, so it stands
wherever a set of operator uids is asked for, and it follows every change
of the accounts without being handed out again.

Imports minislurm.accounts only.
"""

from __future__ import annotations

import logging
import pwd

from minislurm.accounts import ADMIN_LEVELS, ADMINISTRATOR, OPERATOR, Book

log = logging.getLogger(__name__)


class Privileges:
    """The AdminLevel of each uid: superusers, then accounting users by name.

    Args:
        superusers: uids that are always administrators (root, SlurmUser, the daemon's own).
    """

    def __init__(self, superusers: frozenset[int]) -> None:
        self._superusers = superusers
        self._levels: dict[int, int] = {}

    def follow(self, book: Book) -> None:
        """Take the AdminLevels of ``book``'s users (names this host does not know are skipped).

        Args:
            book: the accounts as they now are.
        """
        levels: dict[int, int] = {}
        for user in book.users.values():
            rank = ADMIN_LEVELS.index(user.admin)
            if not rank:
                continue
            try:
                levels[pwd.getpwnam(user.name).pw_uid] = rank
            except KeyError:
                log.warning(
                    "user=%s has AdminLevel=%s but is not known here", user.name, user.admin
                )
        self._levels = levels

    def level(self, uid: int) -> str:
        """The AdminLevel that holds for ``uid``: ``None``, ``Operator`` or ``Administrator``."""
        if uid in self._superusers:
            return ADMINISTRATOR
        return ADMIN_LEVELS[self._levels.get(uid, 0)]

    def __contains__(self, uid: object) -> bool:
        """Whether ``uid`` is at least an operator."""
        return isinstance(uid, int) and self.level(uid) in (OPERATOR, ADMINISTRATOR)

    def is_admin(self, uid: int) -> bool:
        """Whether ``uid`` is an administrator (root and SlurmUser always are)."""
        return self.level(uid) == ADMINISTRATOR
