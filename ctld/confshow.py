"""``scontrol show config``: the configuration as Slurm prints it.

Imports minislurm.
"""

from __future__ import annotations

from minislurm import SLURM_VERSION, units
from minislurm.config import SlurmConfig

NO_TIMEOUT = 65534  # how Slurm shows PrologEpilogTimeout unset: wait as long as they run


def _or_null(value: str) -> str:
    return value or "(null)"


def config_entries(conf: SlurmConfig, port: int, metrics_port: int = 0) -> list[tuple[str, str]]:
    """The key/value lines of ``scontrol show config``, sorted by key as Slurm does.

    Args:
        conf: the configuration.
        port: the port slurmctld actually listens on.
        metrics_port: the port its metrics endpoints listen on, 0 when none.

    Returns:
        ``(key, value)`` pairs with values in Slurm's wording (``5 sec``, ``(null)``).
    """
    params = ",".join(k if not v else f"{k}={v}" for k, v in conf.scheduler_parameters.items())
    entries = {
        "AccountingStorageEnforce": ",".join(conf.accounting_storage_enforce) or "none",
        "AuthType": conf.auth_type,
        "ClusterName": conf.cluster_name,
        "GresTypes": _or_null(",".join(conf.gres_types)),
        "InteractiveStepOptions": conf.interactive_step_options,
        "JobAcctGatherParams": _or_null(",".join(conf.job_acct_gather_params)),
        "JobRequeue": str(int(conf.job_requeue)),
        "KillWait": f"{conf.kill_wait} sec",
        "LaunchParameters": _or_null(",".join(conf.launch_parameters)),
        "MaxArraySize": str(conf.max_array_size),
        "MaxJobCount": str(conf.max_job_count),
        "MetricsAuthUsers": _or_null(",".join(conf.metrics_auth_users)),
        "MetricsParameters": _or_null(",".join(conf.metrics_parameters)),
        "MetricsType": _or_null(conf.metrics_type),
        "MinJobAge": f"{conf.min_job_age} sec",
        "Epilog": _or_null(",".join(conf.epilog)),
        "EpilogSlurmctld": _or_null(",".join(conf.epilog_slurmctld)),
        "HealthCheckInterval": f"{conf.health_check_interval} sec",
        "HealthCheckNodeState": ",".join(conf.health_check_node_state),
        "HealthCheckProgram": _or_null(conf.health_check_program),
        "PrivateData": ",".join(conf.private_data) or "none",
        "Prolog": _or_null(",".join(conf.prolog)),
        "PrologEpilogTimeout": str(conf.prolog_epilog_timeout or NO_TIMEOUT),
        "PrologFlags": _or_null(",".join(conf.prolog_flags)),
        "PrologSlurmctld": _or_null(",".join(conf.prolog_slurmctld)),
        "RebootProgram": _or_null(conf.reboot_program),
        "ResumeTimeout": f"{conf.resume_timeout} sec",
        "SrunEpilog": _or_null(conf.srun_epilog),
        "SrunProlog": _or_null(conf.srun_prolog),
        "TaskEpilog": _or_null(conf.task_epilog),
        "TaskPlugin": _or_null(",".join(conf.task_plugin)),
        "TaskProlog": _or_null(conf.task_prolog),
        "PreemptExemptTime": units.format_duration_long(conf.preempt_exempt_time * 60),
        "PreemptMode": conf.preempt_mode,
        "PreemptType": conf.preempt_type,
        "PriorityDecayHalfLife": units.format_limit_long(conf.priority_decay_half_life),
        "PriorityFavorSmall": "Yes" if conf.priority_favor_small else "No",
        "PriorityMaxAge": units.format_limit_long(conf.priority_max_age),
        "PriorityType": conf.priority_type,
        "PriorityWeightAge": str(conf.priority_weight_age),
        "PriorityWeightFairShare": str(conf.priority_weight_fairshare),
        "PriorityWeightJobSize": str(conf.priority_weight_job_size),
        "PriorityWeightPartition": str(conf.priority_weight_partition),
        "PriorityWeightQOS": str(conf.priority_weight_qos),
        "RequeueDelay": f"{conf.requeue_delay} sec",
        "SchedulerParameters": _or_null(params),
        "SchedulerType": conf.scheduler_type,
        "SelectType": "select/cons_tres",
        "SelectTypeParameters": _or_null(",".join(conf.select_type_parameters)).upper(),
        **{
            f"SlurmctldHost[{index}]": name + (f"({addr})" if addr != name else "")
            for index, (name, addr) in enumerate(conf.controllers)
        },
        "SlurmctldPort": str(port),
        "SlurmctldTimeout": f"{conf.slurmctld_timeout} sec",
        "SlurmdParameters": _or_null(",".join(conf.slurmd_parameters)),
        "SlurmdPort": str(conf.slurmd_port),
        "SlurmdSpoolDir": conf.slurmd_spool_dir,
        "SlurmdTimeout": f"{conf.slurmd_timeout} sec",
        "StateSaveLocation": conf.state_save_location,
        "SLURM_CONF": conf.path,
        "SLURM_VERSION": SLURM_VERSION,
    }
    if metrics_port:
        entries["MetricsPort"] = str(metrics_port)
    return sorted(entries.items(), key=lambda kv: kv[0].lower())
