"""sacctmgr's settings of accounts, users and associations: parsed and checked.

The settings sacctmgr takes (Fairshare=, MaxJobs=, MaxSubmitJobs=, GrpTRES=,
AdminLevel=) are parsed here into the fields of
:class:`~minislurm.accounts.Assoc` and :class:`~minislurm.accounts.User`;
:mod:`ctld.accounting.assocedit` changes the book with them.

Imports only minislurm.
"""

from __future__ import annotations

from minislurm.accounts import ADMINISTRATOR, NO_ADMIN, OPERATOR, UNSET
from minislurm.errors import InvalidRequest

# sacctmgr keys (lower case) -> Assoc field, for the settings we keep.
_ASSOC_KEYS = {
    "fairshare": "shares",
    "share": "shares",
    "shares": "shares",
    "maxjobs": "max_jobs",
    "maxsubmitjobs": "max_submit",
    "maxsubmit": "max_submit",
    "grptres": "grp_tres",
}


class AcctError(InvalidRequest):
    """A rejected sacctmgr request: the message is what sacctmgr prints."""


def _int_value(name: str, value: str) -> int:
    text = value.strip()
    if text in ("-1", ""):
        return UNSET
    if not text.isascii() or not text.isdigit():
        label = "FairShare" if name == "shares" else LABELS[name]
        raise AcctError(f"sacctmgr: error: Invalid value for {label} ({value})")
    return int(text)


LABELS = {
    "shares": "Fairshare",
    "max_jobs": "MaxJobs",
    "max_submit": "MaxSubmitJobs",
    "grp_tres": "GrpTRES",
}


def _grp_tres(value: str) -> str:
    items = [i for i in value.split(",") if i]
    for item in items:
        name, sep, count = item.partition("=")
        if (
            not sep
            or name.lower() not in ("gres/gpu", "cpu", "mem", "node")
            or not (count.isdigit() or count == "-1")
        ):
            raise AcctError(f" Unknown option: GrpTRES={value}")
    return ",".join(i for i in items if not i.endswith("=-1"))


def assoc_settings(settings: dict[str, str]) -> dict[str, object]:
    """Parse the association settings of a request (Fairshare=, MaxJobs=, ...).

    Args:
        settings: keys as given (any case) to their values.

    Returns:
        Assoc field names to values.

    Raises:
        AcctError: a value is malformed.
    """
    out: dict[str, object] = {}
    for key, value in settings.items():
        name = _ASSOC_KEYS.get(key.lower())
        if name is None:
            continue
        out[name] = _grp_tres(value) if name == "grp_tres" else _int_value(name, value)
        if name == "shares" and out[name] == UNSET:
            out[name] = 1
    return out


def parse_admin_level(value: str) -> str:
    """An AdminLevel= value as Slurm reads it: by its first letter (N, O, A or S).

    Args:
        value: what was given.

    Returns:
        One of ADMIN_LEVELS, or "" when the value names none (Slurm then changes nothing).
    """
    first = value.strip()[:1].lower()
    return {"n": NO_ADMIN, "o": OPERATOR, "a": ADMINISTRATOR, "s": ADMINISTRATOR}.get(first, "")


def check_keys(settings: dict[str, str], extra: tuple[str, ...]) -> None:
    """Reject keys sacctmgr does not know for this entity.

    Args:
        settings: the request's settings.
        extra: other keys allowed besides the association's.

    Raises:
        AcctError: an unknown key.
    """
    for key, value in settings.items():
        if key.lower() not in _ASSOC_KEYS and key.lower() not in extra:
            raise AcctError(
                f" Unknown option: {key}={value}\n Use keyword 'where' to modify condition"
            )
