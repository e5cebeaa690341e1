"""What ``scontrol show job`` prints of the options a job was accepted with without effect.

A job keeps those options (JobInfo.options, by long name, as
:mod:`minislurm.optcheck` keeps them); Slurm 22.05 shows most of them in
``scontrol show job``: in the items of its fixed lines (``TimeMin=``,
``ReqB:S:C:T=``, ``Features=``, ``Network=``...) and in lines of their own
(``TresBind=``, ``SpreadJob=Yes``...), worded and ordered as Slurm does.

Pure functions; imports minislurm.units only.
"""

from __future__ import annotations

from minislurm import units

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message


def _options(job: Message) -> dict[str, str]:
    return dict(job.options or {})


def _or(text: str | None, default: str) -> str:
    return default if text is None else text


def _hms(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def items(job: Message) -> dict[str, str]:
    """The values of the fixed lines' items that options change.

    Args:
        job: a JobInfo.

    Returns:
        Item name -> value, for MCS_label, Reboot, TimeMin, ReqB:S:C:T,
        Socks/Node, NtasksPerN:B:S:C, MinCPUsNode, Features, DelayBoot,
        Contiguous, Licenses and Network.
    """
    opts = _options(job)
    sockets, cores, threads = ([*opts.get("extra-node-info", "").split(":"), "", ""])[:3]
    cores = opts.get("cores-per-socket") or cores or "*"
    threads = opts.get("threads-per-core") or threads or "*"
    if any(w in opts.get("hint", "").lower() for w in ("nomultithread", "compute_bound")):
        threads = "1"
    min_cpus = max(int(job.cpus_per_task), 1) * max(int(job.ntasks_per_node), 1)
    time_min = opts.get("time-min")
    delay = int(opts.get("delay-boot", "0") or 0)
    return {
        "MCS_label": opts.get("mcs-label") or "N/A",
        "Reboot": "1" if "reboot" in opts else "0",
        "TimeMin": units.format_limit_long(int(time_min)) if time_min else "N/A",
        "ReqB:S:C:T": f"0:0:{cores}:{threads}",
        "Socks/Node": opts.get("sockets-per-node") or sockets or "*",
        "NtasksPerN:B:S:C": f"{job.ntasks_per_node}:0:"
        f"{opts.get('ntasks-per-socket', '*')}:{opts.get('ntasks-per-core', '*')}",
        "MinCPUsNode": str(max(min_cpus, int(opts.get("mincpus", "0")))),
        "Features": _or(opts.get("constraint"), "(null)"),
        "DelayBoot": _hms(max(delay, 0) * 60),
        "Contiguous": "1" if "contiguous" in opts else "0",
        "Licenses": opts.get("licenses") or "(null)",
        "Network": opts.get("network") or "(null)",
    }


def cluster_features_line(job: Message) -> list[str]:
    """``ClusterFeatures=`` (after the Features line), when given.

    Args:
        job: a JobInfo.

    Returns:
        The line, or none.
    """
    value = _options(job).get("cluster-constraint")
    return [f"ClusterFeatures={value}"] if value else []


def before_power_lines(job: Message) -> list[str]:
    """The lines between ``StdOut=`` and ``Power=``: switches, burst buffer, CPU frequency.

    Args:
        job: a JobInfo.

    Returns:
        The lines.
    """
    opts = _options(job)
    lines = []
    if job.req_switch:
        lines.append(f"Switches={job.req_switch}@{_hms(job.wait4switch)}")
    if opts.get("bb"):
        lines.append(f"BurstBuffer={opts['bb']}")
    if opts.get("cpu-freq"):
        lines.append(_cpu_freq(opts["cpu-freq"]))
    return lines


_FREQ_NAMES = {"low": "Low", "medium": "Medium", "high": "High", "highm1": "HighM1"}
_GOVERNORS = {"performance": "Performance", "ondemand": "OnDemand", "userspace": "UserSpace"}


def _cpu_freq(text: str) -> str:
    low_high, colon, governor = text.partition(":")
    if not colon and low_high.lower() in _GOVERNORS:
        low_high, governor = "", low_high
    low, dash, high = low_high.partition("-")
    if not dash:
        low, high = "", low
    parts = []
    if low:
        parts.append(f"CPU_min_freq={_FREQ_NAMES.get(low.lower(), low)} ")
    if high:
        parts.append(f"CPU_max_freq={_FREQ_NAMES.get(high.lower(), high)} ")
    if governor:
        parts.append(f"Governor={_GOVERNORS.get(governor.lower(), governor)}")
    return "".join(parts)


def after_power_lines(job: Message) -> list[str]:
    """The lines after ``Power=``: flags, what is asked per GPU, GPU requests, mail, container.

    Args:
        job: a JobInfo.

    Returns:
        The lines.
    """
    opts = _options(job)
    typed = f"{job.gpu_type}:" if job.gpu_type else ""
    flags = ""
    gres_flags = opts.get("gres-flags", "").lower()
    if gres_flags:
        flags += "GresEnforceBind=" + ("Yes" if gres_flags == "enforce-binding" else "No")
    if job.kill_on_invalid_dep:
        flags += "KillOInInvalidDependent=Yes"
    if "spread-job" in opts:
        flags += "SpreadJob=Yes"
    lines = [flags] if flags else []
    for key, name, prefix in (
        ("cpus-per-gpu", "CpusPerTres", "gres:gpu:"),
        ("mem-per-gpu", "MemPerTres", "gres:gpu:"),
        ("gpu-bind", "TresBind", "gpu:"),
        ("gpu-freq", "TresFreq", "gpu:"),
    ):
        if opts.get(key):
            lines.append(f"{name}={prefix}{opts[key]}")
    if job.gpus:
        lines.append(f"TresPerJob=gres:gpu:{typed}{job.gpus}")
    if job.tres_per_node:
        lines.append(f"TresPerNode={job.tres_per_node}")
    if opts.get("gpus-per-socket"):
        lines.append(f"TresPerSocket=gres:gpu:{opts['gpus-per-socket']}")
    if job.gpus_per_task:
        lines.append(f"TresPerTask=gres:gpu:{typed}{job.gpus_per_task}")
    if opts.get("ntasks-per-gpu"):
        lines.append(f"NtasksPerTRES={opts['ntasks-per-gpu']}")
    if job.mail_type:
        lines.append(f"MailUser={job.mail_user} MailType={job.mail_type}")
    if opts.get("container"):
        lines.append(f"Container={opts['container']}")
    return lines
