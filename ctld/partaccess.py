"""Who may submit to a partition: its AllowAccounts and AllowGroups.

Slurm refuses such a submission outright (it does not pend): an account
not in AllowAccounts is an invalid account/partition combination, a user in
none of AllowGroups is refused for the group (root is never refused for
its groups, but is for its account).

Imports minislurm only.
"""

from __future__ import annotations

import grp
import pwd
from collections.abc import Collection

from minislurm.config import PartitionConfig
from minislurm.errors import InvalidRequest
from minislurm.model import Job

INVALID_ACCOUNT = "Invalid account or account/partition combination specified"
GROUP_DENIED = "User's group not permitted to use this partition"


def user_groups(user: str, gid: int) -> set[str]:
    """The names of a user's groups: the primary group and every group listing the user.

    Args:
        user: the user name.
        gid: the job's group id.

    Returns:
        Group names (a group id without a name counts as its number).
    """
    names = set()
    try:
        names.add(grp.getgrgid(gid).gr_name)
    except KeyError:
        names.add(str(gid))
    try:
        primary = pwd.getpwnam(user).pw_gid
        names.add(grp.getgrgid(primary).gr_name)
    except KeyError:
        pass
    names.update(g.gr_name for g in grp.getgrall() if user in g.gr_mem)
    return names


def check_access(job: Job, part: PartitionConfig, groups: Collection[str]) -> None:
    """Refuse a job its partition does not admit.

    Args:
        job: the new job, its account resolved.
        part: its partition.
        groups: the user's group names.

    Raises:
        InvalidRequest: Slurm's message.
    """
    if part.allow_accounts is not None and job.account not in part.allow_accounts:
        raise InvalidRequest(INVALID_ACCOUNT)
    if job.uid != 0 and part.allow_groups is not None and not set(part.allow_groups) & set(groups):
        raise InvalidRequest(GROUP_DENIED)
