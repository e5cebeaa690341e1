"""Quality of service: named priorities and per-user job limits.

Every job runs in a QOS (``normal`` unless ``--qos`` says otherwise). A
QOS's Priority feeds the QOS factor of ``priority/multifactor`` (its
Priority over the largest of any QOS); MaxJobsPerUser holds a user's
further jobs in it pending with ``QOSMaxJobsPerUserLimit`` and
MaxSubmitJobsPerUser refuses submissions beyond it. What ``sacctmgr
add|modify|delete qos`` does is here, as pure functions returning the new
table and what sacctmgr prints.

Imports ctld.assoc only.
"""

from __future__ import annotations

from dataclasses import replace

from ctld.assoc import UNSET, AcctError, Qos

_KEYS = {
    "priority": "priority",
    "maxjobsperuser": "max_jobs_pu",
    "maxjobspu": "max_jobs_pu",
    "maxsubmitjobsperuser": "max_submit_pu",
    "maxsubmitpu": "max_submit_pu",
    "description": "description",
}


def _settings(settings: dict[str, str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in settings.items():
        name = _KEYS.get(key.lower())
        if name is None:
            raise AcctError(
                f" Unknown option: {key}={value}\n Use keyword 'where' to modify condition"
            )
        if name == "description":
            out[name] = value
        elif value.strip() == "-1":
            out[name] = UNSET
        elif value.strip().isdigit():
            out[name] = int(value)
        else:
            raise AcctError(f"sacctmgr: error: Invalid value for {key} ({value})")
    return out


def add(
    table: dict[str, Qos], names: list[str], settings: dict[str, str]
) -> tuple[dict[str, Qos], list[str]]:
    """sacctmgr add qos NAME... [Priority=] [MaxJobsPerUser=] [MaxSubmitJobsPerUser=].

    Args:
        table: the QOS by name.
        names: the new names.
        settings: their settings.

    Returns:
        The new table and what sacctmgr prints.

    Raises:
        AcctError: nothing new, or a bad value.
    """
    values = _settings(settings)
    new = [n.lower() for n in names if n.lower() not in table]
    if not new:
        raise AcctError(" Nothing new added.")
    out = dict(table)
    for name in new:
        out[name] = replace(Qos(name, name), **values)  # type: ignore[arg-type]
    lines = [" Adding QOS(s)", *(f"  {n}" for n in new), " Settings"]
    lines.append(f"  Description    = {values.get('description', new[0])}")
    labels = {"priority": "Priority", "max_jobs_pu": "MaxJobsPU", "max_submit_pu": "MaxSubmitPU"}
    lines += [f"  {labels[k]:<24} = {v}" for k, v in values.items() if k in labels]
    return out, lines


def modify(
    table: dict[str, Qos], names: set[str], settings: dict[str, str]
) -> tuple[dict[str, Qos], list[str]]:
    """sacctmgr modify qos [where] Name=X set K=V...

    Args:
        table: the QOS by name.
        names: the QOS to change.
        settings: what to set.

    Returns:
        The new table and what sacctmgr prints.

    Raises:
        AcctError: nothing matched, or a bad value.
    """
    values = _settings(settings)
    hits = sorted(n for n in names if n in table)
    if not hits:
        raise AcctError(" Nothing modified")
    out = dict(table)
    for name in hits:
        out[name] = replace(out[name], **values)  # type: ignore[arg-type]
    return out, [" Modified qos...", *(f"  {n}" for n in hits)]


def delete(
    table: dict[str, Qos], names: set[str], busy: set[str]
) -> tuple[dict[str, Qos], list[str]]:
    """sacctmgr delete qos [where] Name=X.

    Args:
        table: the QOS by name.
        names: the QOS to delete.
        busy: QOS of pending or running jobs.

    Returns:
        The new table and what sacctmgr prints.

    Raises:
        AcctError: nothing matched, or jobs still use one.
    """
    hits = sorted(n for n in names if n in table)
    if not hits:
        raise AcctError(" Nothing deleted")
    if set(hits) & busy:
        raise AcctError(" Error with request: Job(s) active, cancel job(s) before remove")
    return {n: q for n, q in table.items() if n not in hits}, [
        " Deleting QOS(s)...",
        *(f"  {n}" for n in hits),
    ]
