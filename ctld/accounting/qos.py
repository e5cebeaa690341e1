"""Quality of service: named priorities and per-user job limits.

Every job runs in a QOS (``normal`` unless ``--qos`` says otherwise). A
QOS's Priority feeds the QOS factor of ``priority/multifactor`` (its
Priority over the largest of any QOS); MaxJobsPerUser holds a user's
further jobs in it pending with ``QOSMaxJobsPerUserLimit`` and
MaxSubmitJobsPerUser refuses submissions beyond it. Under
``PreemptType=preempt/qos`` its ``Preempt=`` list names the QOS whose jobs
its jobs may preempt, and its PreemptMode (``Cluster``: the cluster's) what
becomes of its own jobs when preempted. What ``sacctmgr add|modify|delete
qos`` does is here, as pure functions returning the new table and what
sacctmgr prints.

Imports ctld.accounting.assoc and minislurm.accounts only.
"""

from __future__ import annotations

from dataclasses import replace

from ctld.accounting.assoc import AcctError
from minislurm.accounts import UNSET, Qos

_KEYS = {
    "priority": "priority",
    "maxjobsperuser": "max_jobs_pu",
    "maxjobspu": "max_jobs_pu",
    "maxsubmitjobsperuser": "max_submit_pu",
    "maxsubmitpu": "max_submit_pu",
    "description": "description",
    "preempt": "preempt",
    "preemptmode": "preempt_mode",
}
PREEMPT_MODES = ("OFF", "CANCEL", "REQUEUE")  # and CLUSTER: the cluster's


def _preempt_mode(key: str, value: str) -> str:
    word = value.strip().upper()
    if word == "CLUSTER":
        return ""
    if word not in PREEMPT_MODES:
        raise AcctError(f"sacctmgr: error: Invalid value for {key} ({value})")
    return word


def _check_preempt(values: dict[str, object], known: set[str]) -> None:
    """Every QOS a ``Preempt=`` list names must exist (or be added with it)."""
    names = values.get("preempt", ())
    for name in names if isinstance(names, tuple) else ():
        if name not in known:
            raise AcctError(f" Invalid qos specification: Preempt={name}")


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
        elif name == "preempt":
            out[name] = tuple(
                dict.fromkeys(n.strip().lower() for n in value.split(",") if n.strip())
            )
        elif name == "preempt_mode":
            out[name] = _preempt_mode(key, value)
        elif value.strip() == "-1":
            out[name] = UNSET
        elif value.strip().isdigit():
            out[name] = int(value)
        else:
            raise AcctError(f"sacctmgr: error: Invalid value for {key} ({value})")
    return out


def _shown(value: object) -> str:
    if isinstance(value, tuple):
        return ",".join(value)
    return str(value) if value != "" else "cluster"


def add(
    table: dict[str, Qos], names: list[str], settings: dict[str, str]
) -> tuple[dict[str, Qos], list[str]]:
    """sacctmgr add qos NAME... [Priority=] [MaxJobsPerUser=] [MaxSubmitJobsPerUser=] [Preempt=].

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
    _check_preempt(values, {*table, *new})
    out = dict(table)
    for name in new:
        out[name] = replace(Qos(name, name), **values)  # type: ignore[arg-type]
    lines = [" Adding QOS(s)", *(f"  {n}" for n in new), " Settings"]
    lines.append(f"  Description    = {values.get('description', new[0])}")
    labels = {
        "priority": "Priority",
        "max_jobs_pu": "MaxJobsPU",
        "max_submit_pu": "MaxSubmitPU",
        "preempt": "Preempt",
        "preempt_mode": "PreemptMode",
    }
    lines += [f"  {labels[k]:<24} = {_shown(v)}" for k, v in values.items() if k in labels]
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
    _check_preempt(values, set(table))
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
