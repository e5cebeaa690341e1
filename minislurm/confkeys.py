"""The keys of slurm.conf that minislurm.config reads, and the values some of them may take.

Each global key maps to its SlurmConfig field and the kind of its value
(``_GLOBAL_KEYS``); the keys Slurm documents that we accept and ignore are
``IGNORED_KEYS``.

Imports minislurm.tlsconf and minislurm.topology.
"""

from __future__ import annotations

from minislurm import tlsconf, topology

# Global keys we implement: key -> (SlurmConfig field, kind of value).
_GLOBAL_KEYS: dict[str, tuple[str, str]] = {
    "ClusterName": ("cluster_name", "lower"),
    "SlurmctldPort": ("controller_port", "port"),
    "SlurmdPort": ("slurmd_port", "port"),
    "StateSaveLocation": ("state_save_location", "stateloc"),
    "SlurmUser": ("slurm_user", "str"),
    "SlurmdSpoolDir": ("slurmd_spool_dir", "str"),
    "AuthType": ("auth_type", "auth"),
    "TLSType": ("tls_type", "tls"),
    "TLSParameters": ("tls_parameters", "tlsparams"),
    "SchedulerType": ("scheduler_type", "sched"),
    "SchedulerParameters": ("scheduler_parameters", "params"),
    "PriorityType": ("priority_type", "priority"),
    "PriorityWeightAge": ("priority_weight_age", "int"),
    "PriorityWeightJobSize": ("priority_weight_job_size", "int"),
    "PriorityWeightPartition": ("priority_weight_partition", "int"),
    "PriorityWeightFairshare": ("priority_weight_fairshare", "int"),
    "PriorityWeightQOS": ("priority_weight_qos", "int"),
    "PriorityMaxAge": ("priority_max_age", "duration"),
    "PriorityDecayHalfLife": ("priority_decay_half_life", "duration"),
    "PriorityFavorSmall": ("priority_favor_small", "bool"),
    "AccountingStorageEnforce": ("accounting_storage_enforce", "list"),
    "SlurmdTimeout": ("slurmd_timeout", "int"),
    "SlurmctldTimeout": ("slurmctld_timeout", "int"),
    "KillWait": ("kill_wait", "int"),
    "JobAcctGatherFrequency": ("job_acct_gather_frequency", "acctfreq"),
    "JobAcctGatherParams": ("job_acct_gather_params", "list"),
    "TaskPlugin": ("task_plugin", "list"),
    "JobRequeue": ("job_requeue", "bool"),
    "RequeueDelay": ("requeue_delay", "int"),
    "PreemptType": ("preempt_type", "preempt"),
    "PreemptMode": ("preempt_mode", "preemptmode"),
    "PreemptExemptTime": ("preempt_exempt_time", "duration"),
    "MinJobAge": ("min_job_age", "int"),
    "MaxArraySize": ("max_array_size", "int"),
    "MaxJobCount": ("max_job_count", "int"),
    "GresTypes": ("gres_types", "list"),
    "SlurmdParameters": ("slurmd_parameters", "list"),
    "SelectTypeParameters": ("select_type_parameters", "list"),
    "LaunchParameters": ("launch_parameters", "list"),
    "InteractiveStepOptions": ("interactive_step_options", "str"),
    "TopologyPlugin": ("topology_plugin", "topology"),
    "MetricsType": ("metrics_type", "metrics"),
    "MetricsPort": ("metrics_port", "port"),
    "MetricsAuthUsers": ("metrics_auth_users", "list"),
    "MetricsParameters": ("metrics_parameters", "list"),
    "PrivateData": ("private_data", "list"),
    "TopologyParam": ("topology_param", "list"),
    "Prolog": ("prolog", "scripts"),
    "Epilog": ("epilog", "scripts"),
    "PrologFlags": ("prolog_flags", "prologflags"),
    "PrologEpilogTimeout": ("prolog_epilog_timeout", "int"),
    "PrologTimeout": ("prolog_timeout", "int"),
    "EpilogTimeout": ("epilog_timeout", "int"),
    "PrologSlurmctld": ("prolog_slurmctld", "scripts"),
    "EpilogSlurmctld": ("epilog_slurmctld", "scripts"),
    "TaskProlog": ("task_prolog", "script"),
    "TaskEpilog": ("task_epilog", "script"),
    "SrunProlog": ("srun_prolog", "script"),
    "SrunEpilog": ("srun_epilog", "script"),
    "HealthCheckProgram": ("health_check_program", "script"),
    "HealthCheckInterval": ("health_check_interval", "int"),
    "HealthCheckNodeState": ("health_check_node_state", "hcstates"),
    "RebootProgram": ("reboot_program", "script"),
    "ResumeTimeout": ("resume_timeout", "int"),
}
# PrologFlags Slurm knows; all but Serial and NoHold's own meaning imply Alloc.
PROLOG_FLAGS = (
    "Alloc", "Contain", "DeferBatch", "NoHold", "ForceRequeueOnFail", "RunInJob", "Serial", "X11",
)  # fmt: skip
HEALTH_CHECK_STATES = ("ALLOC", "ANY", "CYCLE", "IDLE", "MIXED", "NONDRAINED_IDLE", "START_ONLY")
PREEMPT_TYPES = ("preempt/none", "preempt/partition_prio", "preempt/qos")
PREEMPT_MODES = ("OFF", "CANCEL", "REQUEUE")  # SUSPEND and GANG are not supported
_CONTROLLER_KEYS = ("SlurmctldHost", "ControlMachine", "ControlAddr")
_CHOICES = {
    "auth": ("auth/hmac", "auth/munge"),
    "tls": tlsconf.TLS_TYPES,
    "sched": ("sched/backfill", "sched/builtin"),
    "priority": ("priority/basic", "priority/multifactor"),
    "preempt": PREEMPT_TYPES,
    "preemptmode": PREEMPT_MODES,
    "topology": topology.PLUGINS,
    "metrics": ("metrics/openmetrics",),
}

_NODE_KEYS = (
    "NodeName NodeAddr NodeHostname Port CPUs Procs Boards Sockets SocketsPerBoard "
    "CoresPerSocket ThreadsPerCore RealMemory TmpDisk Gres State Weight Feature Features"
).split()
_PARTITION_KEYS = (
    "PartitionName Nodes Default MaxTime DefaultTime MaxNodes MinNodes PriorityTier "
    "PriorityJobFactor AllowAccounts AllowGroups State OverSubscribe Shared TRESBillingWeights "
    "PreemptMode"
).split()

IGNORED_KEYS = frozenset(
    """
    AccountingStorageBackupHost AccountingStorageExternalHost AccountingStorageHost
    AccountingStorageParameters AccountingStoragePass AccountingStoragePort AccountingStorageTRES
    AccountingStorageType AccountingStorageUser AccountingStoreFlags AcctGatherEnergyType
    AcctGatherFilesystemType AcctGatherInterconnectType AcctGatherNodeFreq AcctGatherProfileType
    AllowSpecResourcesUsage AuthAltParameters AuthAltTypes AuthInfo BackupAddr BackupController
    BatchStartTimeout BcastExclude BcastParameters BurstBufferType CliFilterPlugins
    CommunicationParameters CompleteWait CoreSpecPlugin CpuFreqDef CpuFreqGovernors CredType
    DebugFlags DefCpuPerGPU DefMemPerCPU DefMemPerGPU DefMemPerNode DependencyParameters
    DisableRootJobs EioTimeout EnforcePartLimits EpilogMsgTime ExtSensorsFreq ExtSensorsType
    FairShareDampeningFactor FastSchedule FederationParameters FirstJobId GetEnvTimeout GpuFreqDef
    GroupUpdateForce GroupUpdateTime HashPlugin InactiveLimit JobAcctGatherType
    JobCompHost JobCompLoc JobCompParams JobCompPass JobCompPort JobCompType JobCompUser
    JobContainerType JobFileAppend JobSubmitPlugins KeepAliveTime KillOnBadExit Licenses
    LogTimeFormat MailDomain MailProg MaxDBDMsgs MaxMemPerCPU MaxMemPerNode MaxNodeCount
    MaxStepCount MaxTasksPerNode MCSParameters MCSPlugin MessageTimeout MpiDefault MpiParams
    OverTimeLimit PluginDir PlugStackConfig PowerParameters PowerPlugin PreemptParameters
    PrEpParameters PrEpPlugins PriorityCalcPeriod PriorityFlags PriorityParameters
    PrioritySiteFactorParameters PrioritySiteFactorPlugin PriorityUsageResetPeriod
    PriorityWeightAssoc PriorityWeightTRES ProctrackType PropagatePrioProcess
    PropagateResourceLimits PropagateResourceLimitsExcept ReconfigFlags RequeueExit RequeueExitHold
    ResumeFailProgram ResumeProgram ResumeRate ResvEpilog ResvOverRun ResvProlog
    ReturnToService RoutePlugin SchedulerTimeSlice ScronParameters SelectType SlurmctldAddr
    SlurmctldDebug SlurmctldLogFile SlurmctldParameters SlurmctldPidFile SlurmctldPrimaryOffProg
    SlurmctldPrimaryOnProg SlurmctldSyslogDebug SlurmdDebug SlurmdLogFile
    SlurmdPidFile SlurmdSyslogDebug SlurmdUser SlurmSchedLogFile SlurmSchedLogLevel SrunPortRange
    SuspendExcNodes SuspendExcParts SuspendProgram SuspendRate SuspendTime SuspendTimeout
    SwitchParameters SwitchType TaskPluginParam TCPTimeout TmpFS TrackWCKey TreeWidth
    UnkillableStepProgram UnkillableStepTimeout UsePAM VSizeFactor Waittime X11Parameters
    CoreSpecCount CpuBind CpuSpecList MemSpecLimit Reason TRESWeights AllocNodes AllowQos Alternate
    DenyAccounts DenyQos ExclusiveUser GraceTime Hidden LLN MaxCPUsPerNode QOS ReqResv RootOnly
    PowerDownOnIdle
    """.split()
)
"""Keys Slurm documents that we accept and ignore: no warning for these."""

_UNSUPPORTED_LINES = ("NodeSet", "DownNodes", "FrontendName")
_ALL_KEYS = (
    *_GLOBAL_KEYS, *_CONTROLLER_KEYS, *_NODE_KEYS, *_PARTITION_KEYS, *IGNORED_KEYS,
    *_UNSUPPORTED_LINES,
)  # fmt: skip

_TRUE = frozenset(("YES", "Y", "TRUE", "T", "1", "ON"))
_FALSE = frozenset(("NO", "N", "FALSE", "F", "0", "OFF"))
_NODE_STATES = ("UNKNOWN", "IDLE", "DOWN", "DRAIN", "FAIL", "FAILING", "FUTURE", "CLOUD")
_PARTITION_STATES = ("UP", "DOWN", "DRAIN", "INACTIVE")
_OVERSUBSCRIBE = ("NO", "YES", "EXCLUSIVE", "FORCE")
