"""The domain errors of minislurm, shared by every package.

Each error carries Slurm's own wording where Slurm has one. The controller
maps them to gRPC status codes in one place (``ctld/errors.py``).

Imports nothing (the commands import it; it must stay cheap).
"""

from __future__ import annotations


class MinislurmError(Exception):
    """Base of all domain errors."""


class InvalidRequest(MinislurmError):
    """A request that can never be satisfied or is malformed (INVALID_ARGUMENT)."""


class JobNotFound(MinislurmError):
    """No such job (NOT_FOUND): Slurm's ``Invalid job id specified``."""

    def __init__(self, job_id: int | str) -> None:
        super().__init__("Invalid job id specified")
        self.job_id = job_id


class NodeNotFound(MinislurmError):
    """No such node (NOT_FOUND), in Slurm's words (which do not name it)."""

    def __init__(self, name: str) -> None:
        super().__init__("Invalid node name specified")
        self.name = name


class PermissionDenied(MinislurmError):
    """The requester may not act on this object (PERMISSION_DENIED)."""


class InvalidTransition(MinislurmError):
    """An event that is not legal in an object's current state (FAILED_PRECONDITION)."""


class ConfigError(MinislurmError):
    """A malformed configuration line, naming its file and line number."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line
        self.message = message


class ClusterKeyError(MinislurmError):
    """The cluster key is missing, unreadable or unsafe."""


class CredentialError(MinislurmError):
    """A credential that is forged, expired or not for this node (PERMISSION_DENIED)."""


class PrologFailed(MinislurmError):
    """A step cannot start on a node: the node's Prolog failed for its job."""

    MESSAGE = "Job prolog failed"  # slurm_strerror(ESLURMD_PROLOG_FAILED), as srun shows it

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)
