"""``scontrol show``'s records: jobs, nodes, partitions and the configuration.

Each function turns one reply message into the text Slurm 22.05's scontrol
prints: ``Key=Value`` items grouped in lines joined by newline-and-three-
spaces, or by one space with ``-o`` (``--oneliner``). Fields a reply cannot
carry print Slurm's value for "not set".

Pure functions; imports cli.fmt and minislurm's lean modules only, none of
ctld or nodeagent.
"""

from __future__ import annotations

from cli import fmt, scontrol_jobopts
from minislurm import hostlist, units
from minislurm.arrays import array_label

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message

MULTI_LINE_END = "\n   "
CONFIG_KEY_WIDTH = 23


def _time(epoch: int) -> str:
    return fmt.timestamp_or(epoch, "Unknown")


def _or_null(text: str) -> str:
    return text or "(null)"


def job_node_count(job: Message) -> str:
    """``NumNodes=``: the allocated count, else ``min`` or ``min-max`` as requested.

    Args:
        job: a JobInfo.

    Returns:
        The value.
    """
    if job.nodes:
        return str(hostlist.count(job.nodes))
    low = job.min_nodes or 1
    return f"{low}-{job.max_nodes}" if job.max_nodes else str(low)


def _memory_item(job: Message) -> str:
    if job.mem_per_cpu:
        return f"MinMemoryCPU={units.format_memory_mb(job.mem_per_cpu)}"
    mem = job.mem_per_node
    return f"MinMemoryNode={units.format_memory_mb(mem) if mem else '0'}"


def _gpu_range(indices: list[int]) -> str:
    if not indices:
        return ""
    return f"gpu:{len(indices)}(IDX:{_ranges(indices)})"


def _ranges(numbers: list[int]) -> str:
    """``[0, 1, 2, 5]`` as Slurm's bitmap format ``0-2,5``."""
    out: list[str] = []
    ordered = sorted(numbers)
    start = prev = ordered[0]
    for number in [*ordered[1:], None]:
        if number is not None and number == prev + 1:
            prev = number
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if number is not None:
            start = prev = number
    return ",".join(out)


def _detail_lines(job: Message) -> list[str]:
    """``-d``: the job's gres and, per node, what it holds there.

    Neighbouring nodes that hold the same share one line, as Slurm prints them
    (``Nodes=n[1-2] CPU_IDs=0 Mem=0 GRES=gpu:1(IDX:0)``).
    """
    gpus = sum(len(a.gpus) for a in job.allocation)
    lines = [f"JOB_GRES={f'gpu:{gpus}' if gpus else '(null)'}"]
    groups: list[tuple[list[str], str]] = []  # node names, what each holds
    for alloc in job.allocation:
        # NodeAllocation carries a CPU count, not CPU ids: show the first ones.
        cpu_ids = _ranges(list(range(alloc.cpus))) if alloc.cpus else ""
        held = f"CPU_IDs={cpu_ids} Mem={alloc.mem} GRES={_gpu_range(alloc.gpus)}"
        if groups and groups[-1][1] == held:
            groups[-1][0].append(alloc.node)
        else:
            groups.append(([alloc.node], held))
    lines += [f"  Nodes={hostlist.compress(names)} {held}" for names, held in groups]
    return lines


def _array_fields(job: Message) -> str:
    """``ArrayJobId=19 ArrayTaskId=0-3%2 ArrayTaskThrottle=2 `` for array records, else ""."""
    if not job.array_job_id:
        return ""
    if job.has("array_task_id"):
        task = str(job.array_task_id)
    else:
        task = array_label(job.array_tasks, job.array_throttle)
    throttle = f"ArrayTaskThrottle={job.array_throttle} " if job.array_throttle else ""
    return f"ArrayJobId={job.array_job_id} ArrayTaskId={task} {throttle}"


def _job_head(job: Message, details: bool, opts: dict[str, str]) -> list[str]:
    lines = [
        f"JobId={job.job_id} {_array_fields(job)}JobName={job.name}",
        f"UserId={fmt.user_name(job.uid, job.user)}({job.uid}) "
        f"GroupId={fmt.group_name(job.gid, job.group)}({job.gid}) MCS_label={opts['MCS_label']}",
        f"Priority={job.priority} Nice={job.nice} Account={_or_null(job.account)} "
        f"QOS={_or_null(job.qos)}",
        # Slurm writes a reason's spaces as underscores here (not in squeue).
        f"JobState={job.state} Reason={(job.reason or 'None').replace(' ', '_')} "
        f"Dependency={job.dependency or '(null)'}",
        f"Requeue={int(job.requeue)} Restarts={job.restarts} BatchFlag={int(job.batch)} "
        f"Reboot={opts['Reboot']} "
        f"ExitCode={units.format_exit_code(job.exit_code, job.exit_signal)}",
    ]
    if details:
        lines.append("DerivedExitCode=0:0")
    lines += [
        f"RunTime={units.format_duration_long(job.run_time)} "
        f"TimeLimit={units.format_limit_long(job.time_limit)} TimeMin={opts['TimeMin']}",
        f"SubmitTime={_time(job.submit_time)} EligibleTime={_time(job.eligible_time)}",
        f"AccrueTime={_time(job.accrue_time)}",
        f"StartTime={_time(job.start_time)} EndTime={_time(job.end_time)} "
        f"Deadline={_time(job.deadline) if job.deadline else 'N/A'}",
        "SuspendTime=None SecsPreSuspend=0 "
        f"LastSchedEval={_time(job.last_sched_eval)} Scheduler=Main",
        # JobInfo has no session id: Sid prints 0.
        f"Partition={job.partition} AllocNode:Sid={_or_null(job.submit_host)}:0",
        f"ReqNodeList={_or_null(job.req_nodes)} ExcNodeList={_or_null(job.exc_nodes)}",
        f"NodeList={job.nodes}",
    ]
    if job.batch_host:
        lines.append(f"BatchHost={job.batch_host}")
    if job.reservation:
        lines.append(f"Reservation={job.reservation}")
    return lines


def _job_tail(job: Message, details: bool, opts: dict[str, str]) -> list[str]:
    lines = [
        f"NumNodes={job_node_count(job)} NumCPUs={job.num_cpus} NumTasks={job.num_tasks} "
        f"CPUs/Task={job.cpus_per_task or 1} ReqB:S:C:T={opts['ReqB:S:C:T']}",
        f"TRES={job.tres}",
        f"Socks/Node={opts['Socks/Node']} NtasksPerN:B:S:C={opts['NtasksPerN:B:S:C']} CoreSpec=*",
    ]
    if details and job.allocation:
        lines += _detail_lines(job)
    lines += [
        f"MinCPUsNode={opts['MinCPUsNode']} {_memory_item(job)} MinTmpDiskNode=0",
        f"Features={opts['Features']} DelayBoot={opts['DelayBoot']}",
        *scontrol_jobopts.cluster_features_line(job),
        f"OverSubscribe={fmt.over_subscribe(job)} "
        f"Contiguous={opts['Contiguous']} Licenses={opts['Licenses']} Network={opts['Network']}",
        f"Command={_or_null(job.command)}",
        f"WorkDir={job.work_dir}",
    ]
    if job.comment:
        lines.append(f"Comment={job.comment} ")  # Slurm's trailing space
    if job.batch:
        lines += [f"StdErr={job.stderr}", f"StdIn={job.stdin}", f"StdOut={job.stdout}"]
    lines += scontrol_jobopts.before_power_lines(job)
    lines.append("Power=")
    lines += scontrol_jobopts.after_power_lines(job)
    return lines


def job_text(job: Message, oneliner: bool = False, details: bool = False) -> str:
    """One job as ``scontrol show job`` prints it.

    Args:
        job: a JobInfo.
        oneliner: ``-o``: everything on one line.
        details: ``-d``: DerivedExitCode and the per-node allocation.

    Returns:
        The record, with Slurm's trailing separator and blank line.
    """
    end = " " if oneliner else MULTI_LINE_END
    opts = scontrol_jobopts.items(job)
    lines = _job_head(job, details, opts) + _job_tail(job, details, opts)
    return end.join(lines) + end + ("\n" if oneliner else "\n\n")


def _alloc_tres(node: Message) -> str:
    parts = []
    if node.alloc_cpus:
        parts.append(f"cpu={node.alloc_cpus}")
    if node.alloc_memory:
        parts.append(f"mem={units.format_memory_mb(node.alloc_memory)}")
    if node.alloc_gpus:
        parts.append(f"gres/gpu={node.alloc_gpus}")
    return ",".join(parts)


def _cfg_tres(node: Message) -> str:
    text = f"cpu={node.cpus},mem={units.format_memory_mb(node.real_memory)},billing={node.cpus}"
    return text + (f",gres/gpu={node.gpus}" if node.gpus else "")


def node_text(node: Message, oneliner: bool = False) -> str:
    """One node as ``scontrol show node`` prints it.

    Args:
        node: a NodeInfo.
        oneliner: ``-o``: everything on one line.

    Returns:
        The record, ending with a blank line (one newline with ``-o``).
    """
    features = _or_null(node.features)
    lines = [
        f"NodeName={node.name} Arch={_or_null(node.arch)} "
        f"CoresPerSocket={node.cores_per_socket or 1} ",
        f"CPUAlloc={node.alloc_cpus} CPUEfctv={node.cpus} CPUTot={node.cpus} "
        f"CPULoad={node.cpu_load:.2f}",
        f"AvailableFeatures={features}",
        f"ActiveFeatures={features}",
        f"Gres={_or_null(node.gres)}",
        f"NodeAddr={node.addr or node.name} NodeHostName={node.hostname or node.name} "
        f"Version={_or_null(node.version)}",
        f"OS={_or_null(node.os)} ",
        f"RealMemory={node.real_memory} AllocMem={node.alloc_memory} "
        f"FreeMem={node.free_memory} Sockets={node.sockets or 1} Boards=1",
        f"State={node.state} ThreadsPerCore={node.threads_per_core or 1} TmpDisk=0 "
        f"Weight={node.weight or 1} Owner=N/A MCS_label=N/A",
        f"Partitions={','.join(node.partitions)} ",
        f"BootTime={_time(node.boot_time)} SlurmdStartTime={_time(node.slurmd_start_time)}",
        f"LastBusyTime={_time(node.last_busy_time)}",
        f"CfgTRES={_cfg_tres(node)}",
        f"AllocTRES={_alloc_tres(node)}",
        "CapWatts=n/a",
        "CurrentWatts=0 AveWatts=0",
        "ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s",
    ]
    if node.reason:
        lines.append(f"Reason={node.reason} [{reason_user(node)}@{_time(node.reason_time)}]")
    if node.topology:  # as Slurm 25.05+ shows it
        lines.append(f"Topology={node.topology}")
    return (" " if oneliner else MULTI_LINE_END).join(lines) + ("\n" if oneliner else "\n\n")


def reason_user(node: Message) -> str:
    """Who set a node's reason, by name (the controller may send a uid).

    Args:
        node: a NodeInfo.

    Returns:
        The user name, or ``Unknown``.
    """
    who = str(node.reason_user)
    if who.isdigit():
        return fmt.user_name(int(who))
    return who or "Unknown"


def _limit(value: int) -> str:
    return "UNLIMITED" if value == units.INFINITE else str(value)


def partition_text(part: Message, oneliner: bool = False) -> str:
    """One partition as ``scontrol show partition`` prints it.

    Args:
        part: a PartitionInfo.
        oneliner: ``-o``: everything on one line.

    Returns:
        The record, ending with a blank line (one newline with ``-o``).
    """
    default_time = (
        units.format_limit_long(part.default_time) if part.has("default_time") else ("NONE")
    )
    lines = [
        f"PartitionName={part.name}",
        f"AllowGroups={part.allow_groups or 'ALL'} AllowAccounts={part.allow_accounts or 'ALL'} "
        "AllowQos=ALL",
        f"AllocNodes=ALL Default={'YES' if part.default else 'NO'} QoS=N/A",
        f"DefaultTime={default_time} DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO",
        f"MaxNodes={_limit(part.max_nodes)} MaxTime={units.format_limit_long(part.max_time)} "
        f"MinNodes={part.min_nodes} LLN=NO MaxCPUsPerNode=UNLIMITED",
        f"Nodes={_or_null(part.nodes)}",
        f"PriorityJobFactor={part.priority_job_factor} PriorityTier={part.priority_tier} "
        f"RootOnly=NO ReqResv=NO OverSubscribe={part.over_subscribe or 'NO'}",
        f"OverTimeLimit=NONE PreemptMode={part.preempt_mode or 'OFF'}",
        f"State={part.state or 'UP'} TotalCPUs={part.total_cpus} TotalNodes={part.total_nodes} "
        "SelectTypeParameters=NONE",
        "JobDefaults=(null)",
        "DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED",
        f"TRES={part.tres}",
    ]
    return (" " if oneliner else MULTI_LINE_END).join(lines) + ("\n" if oneliner else "\n\n")


def config_text(entries: list[Message], now: float) -> str:
    """``scontrol show config``'s header and ``Key = Value`` lines.

    Args:
        entries: GetConfig's ConfigEntry list, in the controller's order.
        now: the time for the header line.

    Returns:
        The text, ending with the blank line that precedes the ping status.
    """
    lines = [f"Configuration data as of {fmt.timestamp_or(int(now), 'Unknown')}"]
    lines += [f"{e.key:<{CONFIG_KEY_WIDTH}} = {e.value}" for e in entries]
    return "\n".join(lines) + "\n\n"


def topology_line(unit: Message, plugin: str) -> str:
    """One switch or block as ``scontrol show topology`` prints it.

    Args:
        unit: a TopologyUnit.
        plugin: TopologyPlugin (``topology/block`` prints blocks).

    Returns:
        The line, with its newline.
    """
    if plugin == "topology/block":
        kind = "AggregatedBlock" if unit.level else "BlockName"
        nodes = f" Nodes={unit.nodes}" if unit.nodes else ""
        return f"{kind}={unit.name} BlockIndex={unit.index}{nodes} BlockSize={unit.size}\n"
    line = f"SwitchName={unit.name} Level={unit.level} LinkSpeed={unit.link_speed}"
    if unit.nodes:
        line += f" Nodes={unit.nodes}"
    if unit.switches:
        line += f" Switches={unit.switches}"
    return line + "\n"


def topology_matches(units: list[Message], name: str, by_node: bool = False) -> list[Message]:
    """The units named ``name``, or else those that hold every node of the hostlist ``name``.

    Args:
        units: every TopologyUnit, in order.
        name: a switch or block name, or nodes.
        by_node: ``name`` is nodes only.

    Returns:
        The matches, in order.
    """
    if not by_node:
        named = [u for u in units if u.name == name]
        if named:
            return named
    try:
        wanted = set(hostlist.expand(name))
    except ValueError:
        return []
    return [u for u in units if wanted and wanted <= set(hostlist.expand(u.nodes))]
