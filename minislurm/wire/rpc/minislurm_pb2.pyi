from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class JobSpec(_message.Message):
    __slots__ = ("name", "script", "argv", "work_dir", "stdout", "stderr", "stdin", "environment", "partition", "account", "qos", "time_limit", "min_nodes", "max_nodes", "ntasks", "ntasks_per_node", "cpus_per_task", "mem_per_node", "mem_per_cpu", "gres", "gpus", "gpus_per_node", "gpus_per_task", "hold", "nice", "nodelist", "exclude", "requeue", "submit_host", "uid", "gid", "user", "group", "batch", "command", "prio_process", "umask", "submit_dir", "array", "dependency", "kill_on_invalid_dep", "begin_time", "deadline", "test_only", "comment", "mail_type", "mail_user", "open_mode", "warn_signal", "warn_time", "warn_batch", "exclusive", "reservation", "options", "gpu_type")
    class EnvironmentEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    SCRIPT_FIELD_NUMBER: _ClassVar[int]
    ARGV_FIELD_NUMBER: _ClassVar[int]
    WORK_DIR_FIELD_NUMBER: _ClassVar[int]
    STDOUT_FIELD_NUMBER: _ClassVar[int]
    STDERR_FIELD_NUMBER: _ClassVar[int]
    STDIN_FIELD_NUMBER: _ClassVar[int]
    ENVIRONMENT_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_FIELD_NUMBER: _ClassVar[int]
    QOS_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMIT_FIELD_NUMBER: _ClassVar[int]
    MIN_NODES_FIELD_NUMBER: _ClassVar[int]
    MAX_NODES_FIELD_NUMBER: _ClassVar[int]
    NTASKS_FIELD_NUMBER: _ClassVar[int]
    NTASKS_PER_NODE_FIELD_NUMBER: _ClassVar[int]
    CPUS_PER_TASK_FIELD_NUMBER: _ClassVar[int]
    MEM_PER_NODE_FIELD_NUMBER: _ClassVar[int]
    MEM_PER_CPU_FIELD_NUMBER: _ClassVar[int]
    GRES_FIELD_NUMBER: _ClassVar[int]
    GPUS_FIELD_NUMBER: _ClassVar[int]
    GPUS_PER_NODE_FIELD_NUMBER: _ClassVar[int]
    GPUS_PER_TASK_FIELD_NUMBER: _ClassVar[int]
    HOLD_FIELD_NUMBER: _ClassVar[int]
    NICE_FIELD_NUMBER: _ClassVar[int]
    NODELIST_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_FIELD_NUMBER: _ClassVar[int]
    REQUEUE_FIELD_NUMBER: _ClassVar[int]
    SUBMIT_HOST_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    GID_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    PRIO_PROCESS_FIELD_NUMBER: _ClassVar[int]
    UMASK_FIELD_NUMBER: _ClassVar[int]
    SUBMIT_DIR_FIELD_NUMBER: _ClassVar[int]
    ARRAY_FIELD_NUMBER: _ClassVar[int]
    DEPENDENCY_FIELD_NUMBER: _ClassVar[int]
    KILL_ON_INVALID_DEP_FIELD_NUMBER: _ClassVar[int]
    BEGIN_TIME_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    TEST_ONLY_FIELD_NUMBER: _ClassVar[int]
    COMMENT_FIELD_NUMBER: _ClassVar[int]
    MAIL_TYPE_FIELD_NUMBER: _ClassVar[int]
    MAIL_USER_FIELD_NUMBER: _ClassVar[int]
    OPEN_MODE_FIELD_NUMBER: _ClassVar[int]
    WARN_SIGNAL_FIELD_NUMBER: _ClassVar[int]
    WARN_TIME_FIELD_NUMBER: _ClassVar[int]
    WARN_BATCH_FIELD_NUMBER: _ClassVar[int]
    EXCLUSIVE_FIELD_NUMBER: _ClassVar[int]
    RESERVATION_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    GPU_TYPE_FIELD_NUMBER: _ClassVar[int]
    name: str
    script: bytes
    argv: _containers.RepeatedScalarFieldContainer[str]
    work_dir: str
    stdout: str
    stderr: str
    stdin: str
    environment: _containers.ScalarMap[str, str]
    partition: str
    account: str
    qos: str
    time_limit: int
    min_nodes: int
    max_nodes: int
    ntasks: int
    ntasks_per_node: int
    cpus_per_task: int
    mem_per_node: int
    mem_per_cpu: int
    gres: str
    gpus: int
    gpus_per_node: int
    gpus_per_task: int
    hold: bool
    nice: int
    nodelist: str
    exclude: str
    requeue: bool
    submit_host: str
    uid: int
    gid: int
    user: str
    group: str
    batch: bool
    command: str
    prio_process: int
    umask: int
    submit_dir: str
    array: str
    dependency: str
    kill_on_invalid_dep: bool
    begin_time: int
    deadline: int
    test_only: bool
    comment: str
    mail_type: str
    mail_user: str
    open_mode: str
    warn_signal: int
    warn_time: int
    warn_batch: bool
    exclusive: bool
    reservation: str
    options: _containers.ScalarMap[str, str]
    gpu_type: str
    def __init__(self, name: _Optional[str] = ..., script: _Optional[bytes] = ..., argv: _Optional[_Iterable[str]] = ..., work_dir: _Optional[str] = ..., stdout: _Optional[str] = ..., stderr: _Optional[str] = ..., stdin: _Optional[str] = ..., environment: _Optional[_Mapping[str, str]] = ..., partition: _Optional[str] = ..., account: _Optional[str] = ..., qos: _Optional[str] = ..., time_limit: _Optional[int] = ..., min_nodes: _Optional[int] = ..., max_nodes: _Optional[int] = ..., ntasks: _Optional[int] = ..., ntasks_per_node: _Optional[int] = ..., cpus_per_task: _Optional[int] = ..., mem_per_node: _Optional[int] = ..., mem_per_cpu: _Optional[int] = ..., gres: _Optional[str] = ..., gpus: _Optional[int] = ..., gpus_per_node: _Optional[int] = ..., gpus_per_task: _Optional[int] = ..., hold: _Optional[bool] = ..., nice: _Optional[int] = ..., nodelist: _Optional[str] = ..., exclude: _Optional[str] = ..., requeue: _Optional[bool] = ..., submit_host: _Optional[str] = ..., uid: _Optional[int] = ..., gid: _Optional[int] = ..., user: _Optional[str] = ..., group: _Optional[str] = ..., batch: _Optional[bool] = ..., command: _Optional[str] = ..., prio_process: _Optional[int] = ..., umask: _Optional[int] = ..., submit_dir: _Optional[str] = ..., array: _Optional[str] = ..., dependency: _Optional[str] = ..., kill_on_invalid_dep: _Optional[bool] = ..., begin_time: _Optional[int] = ..., deadline: _Optional[int] = ..., test_only: _Optional[bool] = ..., comment: _Optional[str] = ..., mail_type: _Optional[str] = ..., mail_user: _Optional[str] = ..., open_mode: _Optional[str] = ..., warn_signal: _Optional[int] = ..., warn_time: _Optional[int] = ..., warn_batch: _Optional[bool] = ..., exclusive: _Optional[bool] = ..., reservation: _Optional[str] = ..., options: _Optional[_Mapping[str, str]] = ..., gpu_type: _Optional[str] = ...) -> None: ...

class NodeAllocation(_message.Message):
    __slots__ = ("node", "cpus", "mem", "gpus", "ntasks")
    NODE_FIELD_NUMBER: _ClassVar[int]
    CPUS_FIELD_NUMBER: _ClassVar[int]
    MEM_FIELD_NUMBER: _ClassVar[int]
    GPUS_FIELD_NUMBER: _ClassVar[int]
    NTASKS_FIELD_NUMBER: _ClassVar[int]
    node: str
    cpus: int
    mem: int
    gpus: _containers.RepeatedScalarFieldContainer[int]
    ntasks: int
    def __init__(self, node: _Optional[str] = ..., cpus: _Optional[int] = ..., mem: _Optional[int] = ..., gpus: _Optional[_Iterable[int]] = ..., ntasks: _Optional[int] = ...) -> None: ...

class JobInfo(_message.Message):
    __slots__ = ("job_id", "name", "uid", "gid", "user", "group", "account", "qos", "partition", "state", "reason", "priority", "nice", "requeue", "restarts", "batch", "exit_code", "exit_signal", "submit_time", "eligible_time", "accrue_time", "start_time", "end_time", "last_sched_eval", "time_limit", "run_time", "min_nodes", "max_nodes", "num_cpus", "num_tasks", "cpus_per_task", "ntasks_per_node", "req_nodes", "exc_nodes", "nodes", "batch_host", "allocation", "work_dir", "stdout", "stderr", "stdin", "command", "tres", "tres_per_node", "submit_host", "mem_per_node", "mem_per_cpu", "over_subscribe", "gpus", "gpus_per_node", "gpus_per_task", "gres", "state_compact", "submit_dir", "array_job_id", "array_task_id", "array_tasks", "array_throttle", "dependency", "deadline", "cancelled_by", "array_spec", "comment", "mail_type", "mail_user", "exclusive", "reservation", "options", "gpu_type", "kill_on_invalid_dep", "req_switch", "wait4switch")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    GID_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_FIELD_NUMBER: _ClassVar[int]
    QOS_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    NICE_FIELD_NUMBER: _ClassVar[int]
    REQUEUE_FIELD_NUMBER: _ClassVar[int]
    RESTARTS_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    EXIT_SIGNAL_FIELD_NUMBER: _ClassVar[int]
    SUBMIT_TIME_FIELD_NUMBER: _ClassVar[int]
    ELIGIBLE_TIME_FIELD_NUMBER: _ClassVar[int]
    ACCRUE_TIME_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_SCHED_EVAL_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMIT_FIELD_NUMBER: _ClassVar[int]
    RUN_TIME_FIELD_NUMBER: _ClassVar[int]
    MIN_NODES_FIELD_NUMBER: _ClassVar[int]
    MAX_NODES_FIELD_NUMBER: _ClassVar[int]
    NUM_CPUS_FIELD_NUMBER: _ClassVar[int]
    NUM_TASKS_FIELD_NUMBER: _ClassVar[int]
    CPUS_PER_TASK_FIELD_NUMBER: _ClassVar[int]
    NTASKS_PER_NODE_FIELD_NUMBER: _ClassVar[int]
    REQ_NODES_FIELD_NUMBER: _ClassVar[int]
    EXC_NODES_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    BATCH_HOST_FIELD_NUMBER: _ClassVar[int]
    ALLOCATION_FIELD_NUMBER: _ClassVar[int]
    WORK_DIR_FIELD_NUMBER: _ClassVar[int]
    STDOUT_FIELD_NUMBER: _ClassVar[int]
    STDERR_FIELD_NUMBER: _ClassVar[int]
    STDIN_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    TRES_FIELD_NUMBER: _ClassVar[int]
    TRES_PER_NODE_FIELD_NUMBER: _ClassVar[int]
    SUBMIT_HOST_FIELD_NUMBER: _ClassVar[int]
    MEM_PER_NODE_FIELD_NUMBER: _ClassVar[int]
    MEM_PER_CPU_FIELD_NUMBER: _ClassVar[int]
    OVER_SUBSCRIBE_FIELD_NUMBER: _ClassVar[int]
    GPUS_FIELD_NUMBER: _ClassVar[int]
    GPUS_PER_NODE_FIELD_NUMBER: _ClassVar[int]
    GPUS_PER_TASK_FIELD_NUMBER: _ClassVar[int]
    GRES_FIELD_NUMBER: _ClassVar[int]
    STATE_COMPACT_FIELD_NUMBER: _ClassVar[int]
    SUBMIT_DIR_FIELD_NUMBER: _ClassVar[int]
    ARRAY_JOB_ID_FIELD_NUMBER: _ClassVar[int]
    ARRAY_TASK_ID_FIELD_NUMBER: _ClassVar[int]
    ARRAY_TASKS_FIELD_NUMBER: _ClassVar[int]
    ARRAY_THROTTLE_FIELD_NUMBER: _ClassVar[int]
    DEPENDENCY_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_BY_FIELD_NUMBER: _ClassVar[int]
    ARRAY_SPEC_FIELD_NUMBER: _ClassVar[int]
    COMMENT_FIELD_NUMBER: _ClassVar[int]
    MAIL_TYPE_FIELD_NUMBER: _ClassVar[int]
    MAIL_USER_FIELD_NUMBER: _ClassVar[int]
    EXCLUSIVE_FIELD_NUMBER: _ClassVar[int]
    RESERVATION_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    GPU_TYPE_FIELD_NUMBER: _ClassVar[int]
    KILL_ON_INVALID_DEP_FIELD_NUMBER: _ClassVar[int]
    REQ_SWITCH_FIELD_NUMBER: _ClassVar[int]
    WAIT4SWITCH_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    name: str
    uid: int
    gid: int
    user: str
    group: str
    account: str
    qos: str
    partition: str
    state: str
    reason: str
    priority: int
    nice: int
    requeue: bool
    restarts: int
    batch: bool
    exit_code: int
    exit_signal: int
    submit_time: int
    eligible_time: int
    accrue_time: int
    start_time: int
    end_time: int
    last_sched_eval: int
    time_limit: int
    run_time: int
    min_nodes: int
    max_nodes: int
    num_cpus: int
    num_tasks: int
    cpus_per_task: int
    ntasks_per_node: int
    req_nodes: str
    exc_nodes: str
    nodes: str
    batch_host: str
    allocation: _containers.RepeatedCompositeFieldContainer[NodeAllocation]
    work_dir: str
    stdout: str
    stderr: str
    stdin: str
    command: str
    tres: str
    tres_per_node: str
    submit_host: str
    mem_per_node: int
    mem_per_cpu: int
    over_subscribe: bool
    gpus: int
    gpus_per_node: int
    gpus_per_task: int
    gres: str
    state_compact: str
    submit_dir: str
    array_job_id: int
    array_task_id: int
    array_tasks: str
    array_throttle: int
    dependency: str
    deadline: int
    cancelled_by: int
    array_spec: str
    comment: str
    mail_type: str
    mail_user: str
    exclusive: bool
    reservation: str
    options: _containers.ScalarMap[str, str]
    gpu_type: str
    kill_on_invalid_dep: bool
    req_switch: int
    wait4switch: int
    def __init__(self, job_id: _Optional[int] = ..., name: _Optional[str] = ..., uid: _Optional[int] = ..., gid: _Optional[int] = ..., user: _Optional[str] = ..., group: _Optional[str] = ..., account: _Optional[str] = ..., qos: _Optional[str] = ..., partition: _Optional[str] = ..., state: _Optional[str] = ..., reason: _Optional[str] = ..., priority: _Optional[int] = ..., nice: _Optional[int] = ..., requeue: _Optional[bool] = ..., restarts: _Optional[int] = ..., batch: _Optional[bool] = ..., exit_code: _Optional[int] = ..., exit_signal: _Optional[int] = ..., submit_time: _Optional[int] = ..., eligible_time: _Optional[int] = ..., accrue_time: _Optional[int] = ..., start_time: _Optional[int] = ..., end_time: _Optional[int] = ..., last_sched_eval: _Optional[int] = ..., time_limit: _Optional[int] = ..., run_time: _Optional[int] = ..., min_nodes: _Optional[int] = ..., max_nodes: _Optional[int] = ..., num_cpus: _Optional[int] = ..., num_tasks: _Optional[int] = ..., cpus_per_task: _Optional[int] = ..., ntasks_per_node: _Optional[int] = ..., req_nodes: _Optional[str] = ..., exc_nodes: _Optional[str] = ..., nodes: _Optional[str] = ..., batch_host: _Optional[str] = ..., allocation: _Optional[_Iterable[_Union[NodeAllocation, _Mapping]]] = ..., work_dir: _Optional[str] = ..., stdout: _Optional[str] = ..., stderr: _Optional[str] = ..., stdin: _Optional[str] = ..., command: _Optional[str] = ..., tres: _Optional[str] = ..., tres_per_node: _Optional[str] = ..., submit_host: _Optional[str] = ..., mem_per_node: _Optional[int] = ..., mem_per_cpu: _Optional[int] = ..., over_subscribe: _Optional[bool] = ..., gpus: _Optional[int] = ..., gpus_per_node: _Optional[int] = ..., gpus_per_task: _Optional[int] = ..., gres: _Optional[str] = ..., state_compact: _Optional[str] = ..., submit_dir: _Optional[str] = ..., array_job_id: _Optional[int] = ..., array_task_id: _Optional[int] = ..., array_tasks: _Optional[str] = ..., array_throttle: _Optional[int] = ..., dependency: _Optional[str] = ..., deadline: _Optional[int] = ..., cancelled_by: _Optional[int] = ..., array_spec: _Optional[str] = ..., comment: _Optional[str] = ..., mail_type: _Optional[str] = ..., mail_user: _Optional[str] = ..., exclusive: _Optional[bool] = ..., reservation: _Optional[str] = ..., options: _Optional[_Mapping[str, str]] = ..., gpu_type: _Optional[str] = ..., kill_on_invalid_dep: _Optional[bool] = ..., req_switch: _Optional[int] = ..., wait4switch: _Optional[int] = ...) -> None: ...

class SubmitJobRequest(_message.Message):
    __slots__ = ("spec",)
    SPEC_FIELD_NUMBER: _ClassVar[int]
    spec: JobSpec
    def __init__(self, spec: _Optional[_Union[JobSpec, _Mapping]] = ...) -> None: ...

class SubmitJobReply(_message.Message):
    __slots__ = ("job_id", "cluster", "expected_start", "job")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_START_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    cluster: str
    expected_start: int
    job: JobInfo
    def __init__(self, job_id: _Optional[int] = ..., cluster: _Optional[str] = ..., expected_start: _Optional[int] = ..., job: _Optional[_Union[JobInfo, _Mapping]] = ...) -> None: ...

class GetJobsRequest(_message.Message):
    __slots__ = ("job_ids", "users", "partitions", "states", "names", "all_states", "array_tasks")
    JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    USERS_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    STATES_FIELD_NUMBER: _ClassVar[int]
    NAMES_FIELD_NUMBER: _ClassVar[int]
    ALL_STATES_FIELD_NUMBER: _ClassVar[int]
    ARRAY_TASKS_FIELD_NUMBER: _ClassVar[int]
    job_ids: _containers.RepeatedScalarFieldContainer[int]
    users: _containers.RepeatedScalarFieldContainer[str]
    partitions: _containers.RepeatedScalarFieldContainer[str]
    states: _containers.RepeatedScalarFieldContainer[str]
    names: _containers.RepeatedScalarFieldContainer[str]
    all_states: bool
    array_tasks: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, job_ids: _Optional[_Iterable[int]] = ..., users: _Optional[_Iterable[str]] = ..., partitions: _Optional[_Iterable[str]] = ..., states: _Optional[_Iterable[str]] = ..., names: _Optional[_Iterable[str]] = ..., all_states: _Optional[bool] = ..., array_tasks: _Optional[_Iterable[str]] = ...) -> None: ...

class GetJobsReply(_message.Message):
    __slots__ = ("jobs", "now")
    JOBS_FIELD_NUMBER: _ClassVar[int]
    NOW_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[JobInfo]
    now: int
    def __init__(self, jobs: _Optional[_Iterable[_Union[JobInfo, _Mapping]]] = ..., now: _Optional[int] = ...) -> None: ...

class CancelJobsRequest(_message.Message):
    __slots__ = ("job_ids", "signal", "batch_only", "full", "user", "partition", "states", "name", "requester_uid", "array_tasks", "step_id", "has_step")
    JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    BATCH_ONLY_FIELD_NUMBER: _ClassVar[int]
    FULL_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FIELD_NUMBER: _ClassVar[int]
    STATES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REQUESTER_UID_FIELD_NUMBER: _ClassVar[int]
    ARRAY_TASKS_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    HAS_STEP_FIELD_NUMBER: _ClassVar[int]
    job_ids: _containers.RepeatedScalarFieldContainer[int]
    signal: int
    batch_only: bool
    full: bool
    user: str
    partition: str
    states: _containers.RepeatedScalarFieldContainer[str]
    name: str
    requester_uid: int
    array_tasks: _containers.RepeatedScalarFieldContainer[str]
    step_id: int
    has_step: bool
    def __init__(self, job_ids: _Optional[_Iterable[int]] = ..., signal: _Optional[int] = ..., batch_only: _Optional[bool] = ..., full: _Optional[bool] = ..., user: _Optional[str] = ..., partition: _Optional[str] = ..., states: _Optional[_Iterable[str]] = ..., name: _Optional[str] = ..., requester_uid: _Optional[int] = ..., array_tasks: _Optional[_Iterable[str]] = ..., step_id: _Optional[int] = ..., has_step: _Optional[bool] = ...) -> None: ...

class JobResult(_message.Message):
    __slots__ = ("job_id", "error", "ref", "array_ref")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    ARRAY_REF_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    error: str
    ref: str
    array_ref: str
    def __init__(self, job_id: _Optional[int] = ..., error: _Optional[str] = ..., ref: _Optional[str] = ..., array_ref: _Optional[str] = ...) -> None: ...

class CancelJobsReply(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[JobResult]
    def __init__(self, results: _Optional[_Iterable[_Union[JobResult, _Mapping]]] = ...) -> None: ...

class HoldJobsRequest(_message.Message):
    __slots__ = ("job_ids", "action", "requester_uid", "array_tasks")
    class Action(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        HOLD: _ClassVar[HoldJobsRequest.Action]
        USER_HOLD: _ClassVar[HoldJobsRequest.Action]
        RELEASE: _ClassVar[HoldJobsRequest.Action]
        REQUEUE: _ClassVar[HoldJobsRequest.Action]
        REQUEUE_HOLD: _ClassVar[HoldJobsRequest.Action]
    HOLD: HoldJobsRequest.Action
    USER_HOLD: HoldJobsRequest.Action
    RELEASE: HoldJobsRequest.Action
    REQUEUE: HoldJobsRequest.Action
    REQUEUE_HOLD: HoldJobsRequest.Action
    JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    REQUESTER_UID_FIELD_NUMBER: _ClassVar[int]
    ARRAY_TASKS_FIELD_NUMBER: _ClassVar[int]
    job_ids: _containers.RepeatedScalarFieldContainer[int]
    action: HoldJobsRequest.Action
    requester_uid: int
    array_tasks: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, job_ids: _Optional[_Iterable[int]] = ..., action: _Optional[_Union[HoldJobsRequest.Action, str]] = ..., requester_uid: _Optional[int] = ..., array_tasks: _Optional[_Iterable[str]] = ...) -> None: ...

class HoldJobsReply(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[JobResult]
    def __init__(self, results: _Optional[_Iterable[_Union[JobResult, _Mapping]]] = ...) -> None: ...

class UpdateJobRequest(_message.Message):
    __slots__ = ("job_id", "time_limit", "name", "partition", "nice", "requester_uid", "dependency", "array_task_id", "array_throttle", "min_nodes", "max_nodes", "begin_time", "priority", "account", "qos", "comment", "reservation", "requeue", "deadline", "work_dir", "num_tasks", "mail_user", "mail_type", "exc_nodes", "req_nodes", "gres")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMIT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FIELD_NUMBER: _ClassVar[int]
    NICE_FIELD_NUMBER: _ClassVar[int]
    REQUESTER_UID_FIELD_NUMBER: _ClassVar[int]
    DEPENDENCY_FIELD_NUMBER: _ClassVar[int]
    ARRAY_TASK_ID_FIELD_NUMBER: _ClassVar[int]
    ARRAY_THROTTLE_FIELD_NUMBER: _ClassVar[int]
    MIN_NODES_FIELD_NUMBER: _ClassVar[int]
    MAX_NODES_FIELD_NUMBER: _ClassVar[int]
    BEGIN_TIME_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_FIELD_NUMBER: _ClassVar[int]
    QOS_FIELD_NUMBER: _ClassVar[int]
    COMMENT_FIELD_NUMBER: _ClassVar[int]
    RESERVATION_FIELD_NUMBER: _ClassVar[int]
    REQUEUE_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    WORK_DIR_FIELD_NUMBER: _ClassVar[int]
    NUM_TASKS_FIELD_NUMBER: _ClassVar[int]
    MAIL_USER_FIELD_NUMBER: _ClassVar[int]
    MAIL_TYPE_FIELD_NUMBER: _ClassVar[int]
    EXC_NODES_FIELD_NUMBER: _ClassVar[int]
    REQ_NODES_FIELD_NUMBER: _ClassVar[int]
    GRES_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    time_limit: int
    name: str
    partition: str
    nice: int
    requester_uid: int
    dependency: str
    array_task_id: int
    array_throttle: str
    min_nodes: int
    max_nodes: int
    begin_time: int
    priority: int
    account: str
    qos: str
    comment: str
    reservation: str
    requeue: bool
    deadline: int
    work_dir: str
    num_tasks: int
    mail_user: str
    mail_type: str
    exc_nodes: str
    req_nodes: str
    gres: str
    def __init__(self, job_id: _Optional[int] = ..., time_limit: _Optional[int] = ..., name: _Optional[str] = ..., partition: _Optional[str] = ..., nice: _Optional[int] = ..., requester_uid: _Optional[int] = ..., dependency: _Optional[str] = ..., array_task_id: _Optional[int] = ..., array_throttle: _Optional[str] = ..., min_nodes: _Optional[int] = ..., max_nodes: _Optional[int] = ..., begin_time: _Optional[int] = ..., priority: _Optional[int] = ..., account: _Optional[str] = ..., qos: _Optional[str] = ..., comment: _Optional[str] = ..., reservation: _Optional[str] = ..., requeue: _Optional[bool] = ..., deadline: _Optional[int] = ..., work_dir: _Optional[str] = ..., num_tasks: _Optional[int] = ..., mail_user: _Optional[str] = ..., mail_type: _Optional[str] = ..., exc_nodes: _Optional[str] = ..., req_nodes: _Optional[str] = ..., gres: _Optional[str] = ...) -> None: ...

class UpdateJobReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class NodeInfo(_message.Message):
    __slots__ = ("name", "addr", "hostname", "state", "flags", "reason", "reason_time", "reason_user", "cpus", "alloc_cpus", "real_memory", "alloc_memory", "free_memory", "gpus", "alloc_gpus", "gres", "cpu_load", "arch", "os", "boot_time", "slurmd_start_time", "last_busy_time", "partitions", "version", "sockets", "cores_per_socket", "threads_per_core", "weight", "features", "port", "state_compact", "state_long", "topology")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ADDR_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REASON_TIME_FIELD_NUMBER: _ClassVar[int]
    REASON_USER_FIELD_NUMBER: _ClassVar[int]
    CPUS_FIELD_NUMBER: _ClassVar[int]
    ALLOC_CPUS_FIELD_NUMBER: _ClassVar[int]
    REAL_MEMORY_FIELD_NUMBER: _ClassVar[int]
    ALLOC_MEMORY_FIELD_NUMBER: _ClassVar[int]
    FREE_MEMORY_FIELD_NUMBER: _ClassVar[int]
    GPUS_FIELD_NUMBER: _ClassVar[int]
    ALLOC_GPUS_FIELD_NUMBER: _ClassVar[int]
    GRES_FIELD_NUMBER: _ClassVar[int]
    CPU_LOAD_FIELD_NUMBER: _ClassVar[int]
    ARCH_FIELD_NUMBER: _ClassVar[int]
    OS_FIELD_NUMBER: _ClassVar[int]
    BOOT_TIME_FIELD_NUMBER: _ClassVar[int]
    SLURMD_START_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_BUSY_TIME_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SOCKETS_FIELD_NUMBER: _ClassVar[int]
    CORES_PER_SOCKET_FIELD_NUMBER: _ClassVar[int]
    THREADS_PER_CORE_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    FEATURES_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    STATE_COMPACT_FIELD_NUMBER: _ClassVar[int]
    STATE_LONG_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_FIELD_NUMBER: _ClassVar[int]
    name: str
    addr: str
    hostname: str
    state: str
    flags: _containers.RepeatedScalarFieldContainer[str]
    reason: str
    reason_time: int
    reason_user: str
    cpus: int
    alloc_cpus: int
    real_memory: int
    alloc_memory: int
    free_memory: int
    gpus: int
    alloc_gpus: int
    gres: str
    cpu_load: float
    arch: str
    os: str
    boot_time: int
    slurmd_start_time: int
    last_busy_time: int
    partitions: _containers.RepeatedScalarFieldContainer[str]
    version: str
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    weight: int
    features: str
    port: int
    state_compact: str
    state_long: str
    topology: str
    def __init__(self, name: _Optional[str] = ..., addr: _Optional[str] = ..., hostname: _Optional[str] = ..., state: _Optional[str] = ..., flags: _Optional[_Iterable[str]] = ..., reason: _Optional[str] = ..., reason_time: _Optional[int] = ..., reason_user: _Optional[str] = ..., cpus: _Optional[int] = ..., alloc_cpus: _Optional[int] = ..., real_memory: _Optional[int] = ..., alloc_memory: _Optional[int] = ..., free_memory: _Optional[int] = ..., gpus: _Optional[int] = ..., alloc_gpus: _Optional[int] = ..., gres: _Optional[str] = ..., cpu_load: _Optional[float] = ..., arch: _Optional[str] = ..., os: _Optional[str] = ..., boot_time: _Optional[int] = ..., slurmd_start_time: _Optional[int] = ..., last_busy_time: _Optional[int] = ..., partitions: _Optional[_Iterable[str]] = ..., version: _Optional[str] = ..., sockets: _Optional[int] = ..., cores_per_socket: _Optional[int] = ..., threads_per_core: _Optional[int] = ..., weight: _Optional[int] = ..., features: _Optional[str] = ..., port: _Optional[int] = ..., state_compact: _Optional[str] = ..., state_long: _Optional[str] = ..., topology: _Optional[str] = ...) -> None: ...

class GetNodesRequest(_message.Message):
    __slots__ = ("names",)
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class GetNodesReply(_message.Message):
    __slots__ = ("nodes", "now")
    NODES_FIELD_NUMBER: _ClassVar[int]
    NOW_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[NodeInfo]
    now: int
    def __init__(self, nodes: _Optional[_Iterable[_Union[NodeInfo, _Mapping]]] = ..., now: _Optional[int] = ...) -> None: ...

class UpdateNodeRequest(_message.Message):
    __slots__ = ("names", "state", "reason", "requester_uid", "asap", "next_state")
    NAMES_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REQUESTER_UID_FIELD_NUMBER: _ClassVar[int]
    ASAP_FIELD_NUMBER: _ClassVar[int]
    NEXT_STATE_FIELD_NUMBER: _ClassVar[int]
    names: str
    state: str
    reason: str
    requester_uid: int
    asap: bool
    next_state: str
    def __init__(self, names: _Optional[str] = ..., state: _Optional[str] = ..., reason: _Optional[str] = ..., requester_uid: _Optional[int] = ..., asap: _Optional[bool] = ..., next_state: _Optional[str] = ...) -> None: ...

class UpdateNodeReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PartitionInfo(_message.Message):
    __slots__ = ("name", "nodes", "default", "max_time", "default_time", "max_nodes", "min_nodes", "priority_tier", "priority_job_factor", "allow_accounts", "allow_groups", "state", "over_subscribe", "total_cpus", "total_nodes", "tres", "preempt_mode")
    NAME_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_FIELD_NUMBER: _ClassVar[int]
    MAX_TIME_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_TIME_FIELD_NUMBER: _ClassVar[int]
    MAX_NODES_FIELD_NUMBER: _ClassVar[int]
    MIN_NODES_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_TIER_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_JOB_FACTOR_FIELD_NUMBER: _ClassVar[int]
    ALLOW_ACCOUNTS_FIELD_NUMBER: _ClassVar[int]
    ALLOW_GROUPS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    OVER_SUBSCRIBE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CPUS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_NODES_FIELD_NUMBER: _ClassVar[int]
    TRES_FIELD_NUMBER: _ClassVar[int]
    PREEMPT_MODE_FIELD_NUMBER: _ClassVar[int]
    name: str
    nodes: str
    default: bool
    max_time: int
    default_time: int
    max_nodes: int
    min_nodes: int
    priority_tier: int
    priority_job_factor: int
    allow_accounts: str
    allow_groups: str
    state: str
    over_subscribe: str
    total_cpus: int
    total_nodes: int
    tres: str
    preempt_mode: str
    def __init__(self, name: _Optional[str] = ..., nodes: _Optional[str] = ..., default: _Optional[bool] = ..., max_time: _Optional[int] = ..., default_time: _Optional[int] = ..., max_nodes: _Optional[int] = ..., min_nodes: _Optional[int] = ..., priority_tier: _Optional[int] = ..., priority_job_factor: _Optional[int] = ..., allow_accounts: _Optional[str] = ..., allow_groups: _Optional[str] = ..., state: _Optional[str] = ..., over_subscribe: _Optional[str] = ..., total_cpus: _Optional[int] = ..., total_nodes: _Optional[int] = ..., tres: _Optional[str] = ..., preempt_mode: _Optional[str] = ...) -> None: ...

class GetPartitionsRequest(_message.Message):
    __slots__ = ("names",)
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class GetPartitionsReply(_message.Message):
    __slots__ = ("partitions",)
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    partitions: _containers.RepeatedCompositeFieldContainer[PartitionInfo]
    def __init__(self, partitions: _Optional[_Iterable[_Union[PartitionInfo, _Mapping]]] = ...) -> None: ...

class ConfigEntry(_message.Message):
    __slots__ = ("key", "value")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: str
    def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class GetConfigRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetConfigReply(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[ConfigEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[ConfigEntry, _Mapping]]] = ...) -> None: ...

class GetTopologyRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class TopologyUnit(_message.Message):
    __slots__ = ("name", "level", "link_speed", "nodes", "switches", "index", "size")
    NAME_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    LINK_SPEED_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    SWITCHES_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    name: str
    level: int
    link_speed: int
    nodes: str
    switches: str
    index: int
    size: int
    def __init__(self, name: _Optional[str] = ..., level: _Optional[int] = ..., link_speed: _Optional[int] = ..., nodes: _Optional[str] = ..., switches: _Optional[str] = ..., index: _Optional[int] = ..., size: _Optional[int] = ...) -> None: ...

class GetTopologyReply(_message.Message):
    __slots__ = ("plugin", "units")
    PLUGIN_FIELD_NUMBER: _ClassVar[int]
    UNITS_FIELD_NUMBER: _ClassVar[int]
    plugin: str
    units: _containers.RepeatedCompositeFieldContainer[TopologyUnit]
    def __init__(self, plugin: _Optional[str] = ..., units: _Optional[_Iterable[_Union[TopologyUnit, _Mapping]]] = ...) -> None: ...

class PingRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PingReply(_message.Message):
    __slots__ = ("cluster", "version", "now", "role", "host")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    NOW_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    version: str
    now: int
    role: str
    host: str
    def __init__(self, cluster: _Optional[str] = ..., version: _Optional[str] = ..., now: _Optional[int] = ..., role: _Optional[str] = ..., host: _Optional[str] = ...) -> None: ...

class GetStatsRequest(_message.Message):
    __slots__ = ("reset", "requester_uid")
    RESET_FIELD_NUMBER: _ClassVar[int]
    REQUESTER_UID_FIELD_NUMBER: _ClassVar[int]
    reset: bool
    requester_uid: int
    def __init__(self, reset: _Optional[bool] = ..., requester_uid: _Optional[int] = ...) -> None: ...

class GetStatsReply(_message.Message):
    __slots__ = ("sched_cycle_last_us", "sched_cycle_max_us", "sched_cycle_sum_us", "sched_cycle_count", "bf_cycle_last_us", "bf_cycle_max_us", "bf_cycle_sum_us", "bf_cycle_count", "server_start", "jobs_submitted", "jobs_started", "jobs_completed", "jobs_canceled", "jobs_failed", "jobs_pending", "jobs_running", "now", "rpcs_by_type", "rpcs_by_user")
    SCHED_CYCLE_LAST_US_FIELD_NUMBER: _ClassVar[int]
    SCHED_CYCLE_MAX_US_FIELD_NUMBER: _ClassVar[int]
    SCHED_CYCLE_SUM_US_FIELD_NUMBER: _ClassVar[int]
    SCHED_CYCLE_COUNT_FIELD_NUMBER: _ClassVar[int]
    BF_CYCLE_LAST_US_FIELD_NUMBER: _ClassVar[int]
    BF_CYCLE_MAX_US_FIELD_NUMBER: _ClassVar[int]
    BF_CYCLE_SUM_US_FIELD_NUMBER: _ClassVar[int]
    BF_CYCLE_COUNT_FIELD_NUMBER: _ClassVar[int]
    SERVER_START_FIELD_NUMBER: _ClassVar[int]
    JOBS_SUBMITTED_FIELD_NUMBER: _ClassVar[int]
    JOBS_STARTED_FIELD_NUMBER: _ClassVar[int]
    JOBS_COMPLETED_FIELD_NUMBER: _ClassVar[int]
    JOBS_CANCELED_FIELD_NUMBER: _ClassVar[int]
    JOBS_FAILED_FIELD_NUMBER: _ClassVar[int]
    JOBS_PENDING_FIELD_NUMBER: _ClassVar[int]
    JOBS_RUNNING_FIELD_NUMBER: _ClassVar[int]
    NOW_FIELD_NUMBER: _ClassVar[int]
    RPCS_BY_TYPE_FIELD_NUMBER: _ClassVar[int]
    RPCS_BY_USER_FIELD_NUMBER: _ClassVar[int]
    sched_cycle_last_us: int
    sched_cycle_max_us: int
    sched_cycle_sum_us: int
    sched_cycle_count: int
    bf_cycle_last_us: int
    bf_cycle_max_us: int
    bf_cycle_sum_us: int
    bf_cycle_count: int
    server_start: int
    jobs_submitted: int
    jobs_started: int
    jobs_completed: int
    jobs_canceled: int
    jobs_failed: int
    jobs_pending: int
    jobs_running: int
    now: int
    rpcs_by_type: _containers.RepeatedCompositeFieldContainer[RpcCount]
    rpcs_by_user: _containers.RepeatedCompositeFieldContainer[RpcCount]
    def __init__(self, sched_cycle_last_us: _Optional[int] = ..., sched_cycle_max_us: _Optional[int] = ..., sched_cycle_sum_us: _Optional[int] = ..., sched_cycle_count: _Optional[int] = ..., bf_cycle_last_us: _Optional[int] = ..., bf_cycle_max_us: _Optional[int] = ..., bf_cycle_sum_us: _Optional[int] = ..., bf_cycle_count: _Optional[int] = ..., server_start: _Optional[int] = ..., jobs_submitted: _Optional[int] = ..., jobs_started: _Optional[int] = ..., jobs_completed: _Optional[int] = ..., jobs_canceled: _Optional[int] = ..., jobs_failed: _Optional[int] = ..., jobs_pending: _Optional[int] = ..., jobs_running: _Optional[int] = ..., now: _Optional[int] = ..., rpcs_by_type: _Optional[_Iterable[_Union[RpcCount, _Mapping]]] = ..., rpcs_by_user: _Optional[_Iterable[_Union[RpcCount, _Mapping]]] = ...) -> None: ...

class RpcCount(_message.Message):
    __slots__ = ("name", "uid", "count", "total_us")
    NAME_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_US_FIELD_NUMBER: _ClassVar[int]
    name: str
    uid: int
    count: int
    total_us: int
    def __init__(self, name: _Optional[str] = ..., uid: _Optional[int] = ..., count: _Optional[int] = ..., total_us: _Optional[int] = ...) -> None: ...

class AgentJob(_message.Message):
    __slots__ = ("job_id", "running", "status")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    running: bool
    status: JobStatus
    def __init__(self, job_id: _Optional[int] = ..., running: _Optional[bool] = ..., status: _Optional[_Union[JobStatus, _Mapping]] = ...) -> None: ...

class JobStatus(_message.Message):
    __slots__ = ("job_id", "exit_code", "signal", "start_time", "end_time", "outcome", "message", "max_rss", "total_cpu", "restarts", "usage")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    MAX_RSS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CPU_FIELD_NUMBER: _ClassVar[int]
    RESTARTS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    exit_code: int
    signal: int
    start_time: int
    end_time: int
    outcome: str
    message: str
    max_rss: int
    total_cpu: float
    restarts: int
    usage: _containers.RepeatedCompositeFieldContainer[TaskUsage]
    def __init__(self, job_id: _Optional[int] = ..., exit_code: _Optional[int] = ..., signal: _Optional[int] = ..., start_time: _Optional[int] = ..., end_time: _Optional[int] = ..., outcome: _Optional[str] = ..., message: _Optional[str] = ..., max_rss: _Optional[int] = ..., total_cpu: _Optional[float] = ..., restarts: _Optional[int] = ..., usage: _Optional[_Iterable[_Union[TaskUsage, _Mapping]]] = ...) -> None: ...

class RegisterNodeRequest(_message.Message):
    __slots__ = ("name", "addr", "port", "hostname", "cpus", "real_memory", "gpus", "arch", "os", "boot_time", "slurmd_start_time", "version", "jobs", "sockets", "cores_per_socket", "threads_per_core", "gpu_links")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ADDR_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    CPUS_FIELD_NUMBER: _ClassVar[int]
    REAL_MEMORY_FIELD_NUMBER: _ClassVar[int]
    GPUS_FIELD_NUMBER: _ClassVar[int]
    ARCH_FIELD_NUMBER: _ClassVar[int]
    OS_FIELD_NUMBER: _ClassVar[int]
    BOOT_TIME_FIELD_NUMBER: _ClassVar[int]
    SLURMD_START_TIME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    JOBS_FIELD_NUMBER: _ClassVar[int]
    SOCKETS_FIELD_NUMBER: _ClassVar[int]
    CORES_PER_SOCKET_FIELD_NUMBER: _ClassVar[int]
    THREADS_PER_CORE_FIELD_NUMBER: _ClassVar[int]
    GPU_LINKS_FIELD_NUMBER: _ClassVar[int]
    name: str
    addr: str
    port: int
    hostname: str
    cpus: int
    real_memory: int
    gpus: _containers.RepeatedScalarFieldContainer[int]
    arch: str
    os: str
    boot_time: int
    slurmd_start_time: int
    version: str
    jobs: _containers.RepeatedCompositeFieldContainer[AgentJob]
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    gpu_links: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, name: _Optional[str] = ..., addr: _Optional[str] = ..., port: _Optional[int] = ..., hostname: _Optional[str] = ..., cpus: _Optional[int] = ..., real_memory: _Optional[int] = ..., gpus: _Optional[_Iterable[int]] = ..., arch: _Optional[str] = ..., os: _Optional[str] = ..., boot_time: _Optional[int] = ..., slurmd_start_time: _Optional[int] = ..., version: _Optional[str] = ..., jobs: _Optional[_Iterable[_Union[AgentJob, _Mapping]]] = ..., sockets: _Optional[int] = ..., cores_per_socket: _Optional[int] = ..., threads_per_core: _Optional[int] = ..., gpu_links: _Optional[_Iterable[int]] = ...) -> None: ...

class RegisterNodeReply(_message.Message):
    __slots__ = ("kill_job_ids", "heartbeat_interval")
    KILL_JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    kill_job_ids: _containers.RepeatedScalarFieldContainer[int]
    heartbeat_interval: int
    def __init__(self, kill_job_ids: _Optional[_Iterable[int]] = ..., heartbeat_interval: _Optional[int] = ...) -> None: ...

class HeartbeatRequest(_message.Message):
    __slots__ = ("name", "cpu_load", "free_memory", "running_job_ids", "gpus_measured", "gpu_util", "gpu_memory_used")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CPU_LOAD_FIELD_NUMBER: _ClassVar[int]
    FREE_MEMORY_FIELD_NUMBER: _ClassVar[int]
    RUNNING_JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    GPUS_MEASURED_FIELD_NUMBER: _ClassVar[int]
    GPU_UTIL_FIELD_NUMBER: _ClassVar[int]
    GPU_MEMORY_USED_FIELD_NUMBER: _ClassVar[int]
    name: str
    cpu_load: float
    free_memory: int
    running_job_ids: _containers.RepeatedScalarFieldContainer[int]
    gpus_measured: bool
    gpu_util: float
    gpu_memory_used: int
    def __init__(self, name: _Optional[str] = ..., cpu_load: _Optional[float] = ..., free_memory: _Optional[int] = ..., running_job_ids: _Optional[_Iterable[int]] = ..., gpus_measured: _Optional[bool] = ..., gpu_util: _Optional[float] = ..., gpu_memory_used: _Optional[int] = ...) -> None: ...

class HeartbeatReply(_message.Message):
    __slots__ = ("reregister", "kill_job_ids", "state", "drained")
    REREGISTER_FIELD_NUMBER: _ClassVar[int]
    KILL_JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    DRAINED_FIELD_NUMBER: _ClassVar[int]
    reregister: bool
    kill_job_ids: _containers.RepeatedScalarFieldContainer[int]
    state: str
    drained: bool
    def __init__(self, reregister: _Optional[bool] = ..., kill_job_ids: _Optional[_Iterable[int]] = ..., state: _Optional[str] = ..., drained: _Optional[bool] = ...) -> None: ...

class RegisterNodesRequest(_message.Message):
    __slots__ = ("nodes",)
    NODES_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[RegisterNodeRequest]
    def __init__(self, nodes: _Optional[_Iterable[_Union[RegisterNodeRequest, _Mapping]]] = ...) -> None: ...

class RegisterNodesReply(_message.Message):
    __slots__ = ("nodes",)
    NODES_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[RegisterNodeReply]
    def __init__(self, nodes: _Optional[_Iterable[_Union[RegisterNodeReply, _Mapping]]] = ...) -> None: ...

class HeartbeatsRequest(_message.Message):
    __slots__ = ("nodes",)
    NODES_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[HeartbeatRequest]
    def __init__(self, nodes: _Optional[_Iterable[_Union[HeartbeatRequest, _Mapping]]] = ...) -> None: ...

class HeartbeatsReply(_message.Message):
    __slots__ = ("nodes",)
    NODES_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[HeartbeatReply]
    def __init__(self, nodes: _Optional[_Iterable[_Union[HeartbeatReply, _Mapping]]] = ...) -> None: ...

class JobCompleteRequest(_message.Message):
    __slots__ = ("node", "status")
    NODE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    node: str
    status: JobStatus
    def __init__(self, node: _Optional[str] = ..., status: _Optional[_Union[JobStatus, _Mapping]] = ...) -> None: ...

class JobCompleteReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class NodeScriptFailedRequest(_message.Message):
    __slots__ = ("node", "job_id", "restarts", "script", "exit_code", "signal", "timed_out")
    NODE_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    RESTARTS_FIELD_NUMBER: _ClassVar[int]
    SCRIPT_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    node: str
    job_id: int
    restarts: int
    script: str
    exit_code: int
    signal: int
    timed_out: bool
    def __init__(self, node: _Optional[str] = ..., job_id: _Optional[int] = ..., restarts: _Optional[int] = ..., script: _Optional[str] = ..., exit_code: _Optional[int] = ..., signal: _Optional[int] = ..., timed_out: _Optional[bool] = ...) -> None: ...

class NodeScriptFailedReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StepSpec(_message.Message):
    __slots__ = ("job_id", "name", "argv", "min_nodes", "max_nodes", "ntasks", "ntasks_per_node", "cpus_per_task", "gpus", "gpus_per_node", "gpus_per_task", "gres", "nodelist", "exclude", "distribution", "exclusive", "overlap", "mem_per_node", "mem_per_cpu", "requester_uid", "cwd", "exact", "interactive", "srun_host", "srun_pid", "gpu_type")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGV_FIELD_NUMBER: _ClassVar[int]
    MIN_NODES_FIELD_NUMBER: _ClassVar[int]
    MAX_NODES_FIELD_NUMBER: _ClassVar[int]
    NTASKS_FIELD_NUMBER: _ClassVar[int]
    NTASKS_PER_NODE_FIELD_NUMBER: _ClassVar[int]
    CPUS_PER_TASK_FIELD_NUMBER: _ClassVar[int]
    GPUS_FIELD_NUMBER: _ClassVar[int]
    GPUS_PER_NODE_FIELD_NUMBER: _ClassVar[int]
    GPUS_PER_TASK_FIELD_NUMBER: _ClassVar[int]
    GRES_FIELD_NUMBER: _ClassVar[int]
    NODELIST_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_FIELD_NUMBER: _ClassVar[int]
    DISTRIBUTION_FIELD_NUMBER: _ClassVar[int]
    EXCLUSIVE_FIELD_NUMBER: _ClassVar[int]
    OVERLAP_FIELD_NUMBER: _ClassVar[int]
    MEM_PER_NODE_FIELD_NUMBER: _ClassVar[int]
    MEM_PER_CPU_FIELD_NUMBER: _ClassVar[int]
    REQUESTER_UID_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    EXACT_FIELD_NUMBER: _ClassVar[int]
    INTERACTIVE_FIELD_NUMBER: _ClassVar[int]
    SRUN_HOST_FIELD_NUMBER: _ClassVar[int]
    SRUN_PID_FIELD_NUMBER: _ClassVar[int]
    GPU_TYPE_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    name: str
    argv: _containers.RepeatedScalarFieldContainer[str]
    min_nodes: int
    max_nodes: int
    ntasks: int
    ntasks_per_node: int
    cpus_per_task: int
    gpus: int
    gpus_per_node: int
    gpus_per_task: int
    gres: str
    nodelist: str
    exclude: str
    distribution: str
    exclusive: bool
    overlap: bool
    mem_per_node: int
    mem_per_cpu: int
    requester_uid: int
    cwd: str
    exact: bool
    interactive: bool
    srun_host: str
    srun_pid: int
    gpu_type: str
    def __init__(self, job_id: _Optional[int] = ..., name: _Optional[str] = ..., argv: _Optional[_Iterable[str]] = ..., min_nodes: _Optional[int] = ..., max_nodes: _Optional[int] = ..., ntasks: _Optional[int] = ..., ntasks_per_node: _Optional[int] = ..., cpus_per_task: _Optional[int] = ..., gpus: _Optional[int] = ..., gpus_per_node: _Optional[int] = ..., gpus_per_task: _Optional[int] = ..., gres: _Optional[str] = ..., nodelist: _Optional[str] = ..., exclude: _Optional[str] = ..., distribution: _Optional[str] = ..., exclusive: _Optional[bool] = ..., overlap: _Optional[bool] = ..., mem_per_node: _Optional[int] = ..., mem_per_cpu: _Optional[int] = ..., requester_uid: _Optional[int] = ..., cwd: _Optional[str] = ..., exact: _Optional[bool] = ..., interactive: _Optional[bool] = ..., srun_host: _Optional[str] = ..., srun_pid: _Optional[int] = ..., gpu_type: _Optional[str] = ...) -> None: ...

class StepNode(_message.Message):
    __slots__ = ("node", "addr", "port", "cpus", "gpus", "task_ids", "mem")
    NODE_FIELD_NUMBER: _ClassVar[int]
    ADDR_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    CPUS_FIELD_NUMBER: _ClassVar[int]
    GPUS_FIELD_NUMBER: _ClassVar[int]
    TASK_IDS_FIELD_NUMBER: _ClassVar[int]
    MEM_FIELD_NUMBER: _ClassVar[int]
    node: str
    addr: str
    port: int
    cpus: int
    gpus: _containers.RepeatedScalarFieldContainer[int]
    task_ids: _containers.RepeatedScalarFieldContainer[int]
    mem: int
    def __init__(self, node: _Optional[str] = ..., addr: _Optional[str] = ..., port: _Optional[int] = ..., cpus: _Optional[int] = ..., gpus: _Optional[_Iterable[int]] = ..., task_ids: _Optional[_Iterable[int]] = ..., mem: _Optional[int] = ...) -> None: ...

class StepInfo(_message.Message):
    __slots__ = ("job_id", "step_id", "name", "state", "nodes", "ntasks", "cpus_per_task", "gpus_per_task", "nodelist", "start_time", "end_time", "exit_code", "signal", "distribution", "argv", "max_rss", "total_cpu", "uid", "gid", "partition", "array_job_id", "array_task_id", "time_limit", "srun_host", "srun_pid", "tres", "num_cpus", "tres_per_node")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    NTASKS_FIELD_NUMBER: _ClassVar[int]
    CPUS_PER_TASK_FIELD_NUMBER: _ClassVar[int]
    GPUS_PER_TASK_FIELD_NUMBER: _ClassVar[int]
    NODELIST_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    DISTRIBUTION_FIELD_NUMBER: _ClassVar[int]
    ARGV_FIELD_NUMBER: _ClassVar[int]
    MAX_RSS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CPU_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    GID_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FIELD_NUMBER: _ClassVar[int]
    ARRAY_JOB_ID_FIELD_NUMBER: _ClassVar[int]
    ARRAY_TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMIT_FIELD_NUMBER: _ClassVar[int]
    SRUN_HOST_FIELD_NUMBER: _ClassVar[int]
    SRUN_PID_FIELD_NUMBER: _ClassVar[int]
    TRES_FIELD_NUMBER: _ClassVar[int]
    NUM_CPUS_FIELD_NUMBER: _ClassVar[int]
    TRES_PER_NODE_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    step_id: int
    name: str
    state: str
    nodes: _containers.RepeatedCompositeFieldContainer[StepNode]
    ntasks: int
    cpus_per_task: int
    gpus_per_task: int
    nodelist: str
    start_time: int
    end_time: int
    exit_code: int
    signal: int
    distribution: str
    argv: str
    max_rss: int
    total_cpu: float
    uid: int
    gid: int
    partition: str
    array_job_id: int
    array_task_id: int
    time_limit: int
    srun_host: str
    srun_pid: int
    tres: str
    num_cpus: int
    tres_per_node: str
    def __init__(self, job_id: _Optional[int] = ..., step_id: _Optional[int] = ..., name: _Optional[str] = ..., state: _Optional[str] = ..., nodes: _Optional[_Iterable[_Union[StepNode, _Mapping]]] = ..., ntasks: _Optional[int] = ..., cpus_per_task: _Optional[int] = ..., gpus_per_task: _Optional[int] = ..., nodelist: _Optional[str] = ..., start_time: _Optional[int] = ..., end_time: _Optional[int] = ..., exit_code: _Optional[int] = ..., signal: _Optional[int] = ..., distribution: _Optional[str] = ..., argv: _Optional[str] = ..., max_rss: _Optional[int] = ..., total_cpu: _Optional[float] = ..., uid: _Optional[int] = ..., gid: _Optional[int] = ..., partition: _Optional[str] = ..., array_job_id: _Optional[int] = ..., array_task_id: _Optional[int] = ..., time_limit: _Optional[int] = ..., srun_host: _Optional[str] = ..., srun_pid: _Optional[int] = ..., tres: _Optional[str] = ..., num_cpus: _Optional[int] = ..., tres_per_node: _Optional[str] = ...) -> None: ...

class StepCredential(_message.Message):
    __slots__ = ("job_id", "step_id", "uid", "gid", "user", "expires", "nodes", "ntasks")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    GID_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    NTASKS_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    step_id: int
    uid: int
    gid: int
    user: str
    expires: int
    nodes: _containers.RepeatedCompositeFieldContainer[StepNode]
    ntasks: int
    def __init__(self, job_id: _Optional[int] = ..., step_id: _Optional[int] = ..., uid: _Optional[int] = ..., gid: _Optional[int] = ..., user: _Optional[str] = ..., expires: _Optional[int] = ..., nodes: _Optional[_Iterable[_Union[StepNode, _Mapping]]] = ..., ntasks: _Optional[int] = ...) -> None: ...

class SignedCredential(_message.Message):
    __slots__ = ("payload", "signature")
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    payload: bytes
    signature: bytes
    def __init__(self, payload: _Optional[bytes] = ..., signature: _Optional[bytes] = ...) -> None: ...

class CreateStepRequest(_message.Message):
    __slots__ = ("spec",)
    SPEC_FIELD_NUMBER: _ClassVar[int]
    spec: StepSpec
    def __init__(self, spec: _Optional[_Union[StepSpec, _Mapping]] = ...) -> None: ...

class CreateStepReply(_message.Message):
    __slots__ = ("step", "credential", "job")
    STEP_FIELD_NUMBER: _ClassVar[int]
    CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    step: StepInfo
    credential: SignedCredential
    job: JobInfo
    def __init__(self, step: _Optional[_Union[StepInfo, _Mapping]] = ..., credential: _Optional[_Union[SignedCredential, _Mapping]] = ..., job: _Optional[_Union[JobInfo, _Mapping]] = ...) -> None: ...

class TaskExit(_message.Message):
    __slots__ = ("task_id", "exit_code", "signal")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    task_id: int
    exit_code: int
    signal: int
    def __init__(self, task_id: _Optional[int] = ..., exit_code: _Optional[int] = ..., signal: _Optional[int] = ...) -> None: ...

class StepCompleteRequest(_message.Message):
    __slots__ = ("node", "job_id", "step_id", "tasks", "start_time", "end_time", "max_rss", "total_cpu", "out_of_memory", "usage")
    NODE_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    MAX_RSS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CPU_FIELD_NUMBER: _ClassVar[int]
    OUT_OF_MEMORY_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    node: str
    job_id: int
    step_id: int
    tasks: _containers.RepeatedCompositeFieldContainer[TaskExit]
    start_time: int
    end_time: int
    max_rss: int
    total_cpu: float
    out_of_memory: bool
    usage: _containers.RepeatedCompositeFieldContainer[TaskUsage]
    def __init__(self, node: _Optional[str] = ..., job_id: _Optional[int] = ..., step_id: _Optional[int] = ..., tasks: _Optional[_Iterable[_Union[TaskExit, _Mapping]]] = ..., start_time: _Optional[int] = ..., end_time: _Optional[int] = ..., max_rss: _Optional[int] = ..., total_cpu: _Optional[float] = ..., out_of_memory: _Optional[bool] = ..., usage: _Optional[_Iterable[_Union[TaskUsage, _Mapping]]] = ...) -> None: ...

class StepCompleteReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class EndStepRequest(_message.Message):
    __slots__ = ("job_id", "step_id", "requester_uid")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    REQUESTER_UID_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    step_id: int
    requester_uid: int
    def __init__(self, job_id: _Optional[int] = ..., step_id: _Optional[int] = ..., requester_uid: _Optional[int] = ...) -> None: ...

class EndStepReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetStepsRequest(_message.Message):
    __slots__ = ("job_id", "running")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    running: bool
    def __init__(self, job_id: _Optional[int] = ..., running: _Optional[bool] = ...) -> None: ...

class GetStepsReply(_message.Message):
    __slots__ = ("steps", "now", "cluster")
    STEPS_FIELD_NUMBER: _ClassVar[int]
    NOW_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    steps: _containers.RepeatedCompositeFieldContainer[StepInfo]
    now: int
    cluster: str
    def __init__(self, steps: _Optional[_Iterable[_Union[StepInfo, _Mapping]]] = ..., now: _Optional[int] = ..., cluster: _Optional[str] = ...) -> None: ...

class StepStatRequest(_message.Message):
    __slots__ = ("job_id", "step_id", "requester_uid")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    REQUESTER_UID_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    step_id: int
    requester_uid: int
    def __init__(self, job_id: _Optional[int] = ..., step_id: _Optional[int] = ..., requester_uid: _Optional[int] = ...) -> None: ...

class NodeStepStatRequest(_message.Message):
    __slots__ = ("job_id", "step_id", "node")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    step_id: int
    node: str
    def __init__(self, job_id: _Optional[int] = ..., step_id: _Optional[int] = ..., node: _Optional[str] = ...) -> None: ...

class TaskUsage(_message.Message):
    __slots__ = ("task_id", "max_rss", "max_vmem", "max_pages", "cpu", "disk_read", "disk_write", "gpus", "max_gpu_util", "max_gpu_mem")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    MAX_RSS_FIELD_NUMBER: _ClassVar[int]
    MAX_VMEM_FIELD_NUMBER: _ClassVar[int]
    MAX_PAGES_FIELD_NUMBER: _ClassVar[int]
    CPU_FIELD_NUMBER: _ClassVar[int]
    DISK_READ_FIELD_NUMBER: _ClassVar[int]
    DISK_WRITE_FIELD_NUMBER: _ClassVar[int]
    GPUS_FIELD_NUMBER: _ClassVar[int]
    MAX_GPU_UTIL_FIELD_NUMBER: _ClassVar[int]
    MAX_GPU_MEM_FIELD_NUMBER: _ClassVar[int]
    task_id: int
    max_rss: int
    max_vmem: int
    max_pages: int
    cpu: float
    disk_read: int
    disk_write: int
    gpus: int
    max_gpu_util: int
    max_gpu_mem: int
    def __init__(self, task_id: _Optional[int] = ..., max_rss: _Optional[int] = ..., max_vmem: _Optional[int] = ..., max_pages: _Optional[int] = ..., cpu: _Optional[float] = ..., disk_read: _Optional[int] = ..., disk_write: _Optional[int] = ..., gpus: _Optional[int] = ..., max_gpu_util: _Optional[int] = ..., max_gpu_mem: _Optional[int] = ...) -> None: ...

class NodeStepStat(_message.Message):
    __slots__ = ("node", "tasks", "pids")
    NODE_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    PIDS_FIELD_NUMBER: _ClassVar[int]
    node: str
    tasks: _containers.RepeatedCompositeFieldContainer[TaskUsage]
    pids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, node: _Optional[str] = ..., tasks: _Optional[_Iterable[_Union[TaskUsage, _Mapping]]] = ..., pids: _Optional[_Iterable[int]] = ...) -> None: ...

class StepStatReply(_message.Message):
    __slots__ = ("nodes",)
    NODES_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[NodeStepStat]
    def __init__(self, nodes: _Optional[_Iterable[_Union[NodeStepStat, _Mapping]]] = ...) -> None: ...

class CompleteJobRequest(_message.Message):
    __slots__ = ("job_id", "exit_code", "signal", "requester_uid")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    REQUESTER_UID_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    exit_code: int
    signal: int
    requester_uid: int
    def __init__(self, job_id: _Optional[int] = ..., exit_code: _Optional[int] = ..., signal: _Optional[int] = ..., requester_uid: _Optional[int] = ...) -> None: ...

class CompleteJobReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class WaitJobRequest(_message.Message):
    __slots__ = ("job_id", "timeout", "until_ended")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    UNTIL_ENDED_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    timeout: float
    until_ended: bool
    def __init__(self, job_id: _Optional[int] = ..., timeout: _Optional[float] = ..., until_ended: _Optional[bool] = ...) -> None: ...

class WaitJobReply(_message.Message):
    __slots__ = ("job",)
    JOB_FIELD_NUMBER: _ClassVar[int]
    job: JobInfo
    def __init__(self, job: _Optional[_Union[JobInfo, _Mapping]] = ...) -> None: ...

class AcctRecord(_message.Message):
    __slots__ = ("job_id", "job_id_raw", "step", "name", "partition", "account", "user", "uid", "group", "gid", "state", "cancelled_by", "exit_code", "exit_signal", "derived_exit_code", "derived_exit_signal", "submit_time", "eligible_time", "start_time", "end_time", "elapsed", "nodes", "nnodes", "alloc_cpus", "req_cpus", "alloc_tres", "req_tres", "time_limit", "max_rss", "total_cpu", "reason", "restarts", "work_dir", "ntasks", "array_job_id", "array_task_id", "qos", "cluster", "usage")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_RAW_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    GID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_BY_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    EXIT_SIGNAL_FIELD_NUMBER: _ClassVar[int]
    DERIVED_EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    DERIVED_EXIT_SIGNAL_FIELD_NUMBER: _ClassVar[int]
    SUBMIT_TIME_FIELD_NUMBER: _ClassVar[int]
    ELIGIBLE_TIME_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    NNODES_FIELD_NUMBER: _ClassVar[int]
    ALLOC_CPUS_FIELD_NUMBER: _ClassVar[int]
    REQ_CPUS_FIELD_NUMBER: _ClassVar[int]
    ALLOC_TRES_FIELD_NUMBER: _ClassVar[int]
    REQ_TRES_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMIT_FIELD_NUMBER: _ClassVar[int]
    MAX_RSS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CPU_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RESTARTS_FIELD_NUMBER: _ClassVar[int]
    WORK_DIR_FIELD_NUMBER: _ClassVar[int]
    NTASKS_FIELD_NUMBER: _ClassVar[int]
    ARRAY_JOB_ID_FIELD_NUMBER: _ClassVar[int]
    ARRAY_TASK_ID_FIELD_NUMBER: _ClassVar[int]
    QOS_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    job_id_raw: int
    step: str
    name: str
    partition: str
    account: str
    user: str
    uid: int
    group: str
    gid: int
    state: str
    cancelled_by: int
    exit_code: int
    exit_signal: int
    derived_exit_code: int
    derived_exit_signal: int
    submit_time: int
    eligible_time: int
    start_time: int
    end_time: int
    elapsed: int
    nodes: str
    nnodes: int
    alloc_cpus: int
    req_cpus: int
    alloc_tres: str
    req_tres: str
    time_limit: int
    max_rss: int
    total_cpu: float
    reason: str
    restarts: int
    work_dir: str
    ntasks: int
    array_job_id: int
    array_task_id: int
    qos: str
    cluster: str
    usage: _containers.RepeatedCompositeFieldContainer[NodeStepStat]
    def __init__(self, job_id: _Optional[str] = ..., job_id_raw: _Optional[int] = ..., step: _Optional[str] = ..., name: _Optional[str] = ..., partition: _Optional[str] = ..., account: _Optional[str] = ..., user: _Optional[str] = ..., uid: _Optional[int] = ..., group: _Optional[str] = ..., gid: _Optional[int] = ..., state: _Optional[str] = ..., cancelled_by: _Optional[int] = ..., exit_code: _Optional[int] = ..., exit_signal: _Optional[int] = ..., derived_exit_code: _Optional[int] = ..., derived_exit_signal: _Optional[int] = ..., submit_time: _Optional[int] = ..., eligible_time: _Optional[int] = ..., start_time: _Optional[int] = ..., end_time: _Optional[int] = ..., elapsed: _Optional[int] = ..., nodes: _Optional[str] = ..., nnodes: _Optional[int] = ..., alloc_cpus: _Optional[int] = ..., req_cpus: _Optional[int] = ..., alloc_tres: _Optional[str] = ..., req_tres: _Optional[str] = ..., time_limit: _Optional[int] = ..., max_rss: _Optional[int] = ..., total_cpu: _Optional[float] = ..., reason: _Optional[str] = ..., restarts: _Optional[int] = ..., work_dir: _Optional[str] = ..., ntasks: _Optional[int] = ..., array_job_id: _Optional[int] = ..., array_task_id: _Optional[int] = ..., qos: _Optional[str] = ..., cluster: _Optional[str] = ..., usage: _Optional[_Iterable[_Union[NodeStepStat, _Mapping]]] = ...) -> None: ...

class GetAccountingRequest(_message.Message):
    __slots__ = ("jobs", "users", "states", "start_after", "end_before", "jobs_only", "partitions", "duplicates")
    JOBS_FIELD_NUMBER: _ClassVar[int]
    USERS_FIELD_NUMBER: _ClassVar[int]
    STATES_FIELD_NUMBER: _ClassVar[int]
    START_AFTER_FIELD_NUMBER: _ClassVar[int]
    END_BEFORE_FIELD_NUMBER: _ClassVar[int]
    JOBS_ONLY_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    DUPLICATES_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedScalarFieldContainer[str]
    users: _containers.RepeatedScalarFieldContainer[str]
    states: _containers.RepeatedScalarFieldContainer[str]
    start_after: int
    end_before: int
    jobs_only: bool
    partitions: _containers.RepeatedScalarFieldContainer[str]
    duplicates: bool
    def __init__(self, jobs: _Optional[_Iterable[str]] = ..., users: _Optional[_Iterable[str]] = ..., states: _Optional[_Iterable[str]] = ..., start_after: _Optional[int] = ..., end_before: _Optional[int] = ..., jobs_only: _Optional[bool] = ..., partitions: _Optional[_Iterable[str]] = ..., duplicates: _Optional[bool] = ...) -> None: ...

class GetAccountingReply(_message.Message):
    __slots__ = ("records", "now")
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    NOW_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[AcctRecord]
    now: int
    def __init__(self, records: _Optional[_Iterable[_Union[AcctRecord, _Mapping]]] = ..., now: _Optional[int] = ...) -> None: ...

class ManageAssocRequest(_message.Message):
    __slots__ = ("verb", "entity", "names", "where", "settings", "requester_uid")
    class WhereEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class SettingsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    VERB_FIELD_NUMBER: _ClassVar[int]
    ENTITY_FIELD_NUMBER: _ClassVar[int]
    NAMES_FIELD_NUMBER: _ClassVar[int]
    WHERE_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    REQUESTER_UID_FIELD_NUMBER: _ClassVar[int]
    verb: str
    entity: str
    names: _containers.RepeatedScalarFieldContainer[str]
    where: _containers.ScalarMap[str, str]
    settings: _containers.ScalarMap[str, str]
    requester_uid: int
    def __init__(self, verb: _Optional[str] = ..., entity: _Optional[str] = ..., names: _Optional[_Iterable[str]] = ..., where: _Optional[_Mapping[str, str]] = ..., settings: _Optional[_Mapping[str, str]] = ..., requester_uid: _Optional[int] = ...) -> None: ...

class ManageAssocReply(_message.Message):
    __slots__ = ("lines",)
    LINES_FIELD_NUMBER: _ClassVar[int]
    lines: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, lines: _Optional[_Iterable[str]] = ...) -> None: ...

class AssocInfo(_message.Message):
    __slots__ = ("account", "user", "parent", "shares", "max_jobs", "max_submit", "grp_tres", "depth", "raw_usage", "norm_shares", "norm_usage", "effective_usage", "level_fs", "fairshare")
    ACCOUNT_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    PARENT_FIELD_NUMBER: _ClassVar[int]
    SHARES_FIELD_NUMBER: _ClassVar[int]
    MAX_JOBS_FIELD_NUMBER: _ClassVar[int]
    MAX_SUBMIT_FIELD_NUMBER: _ClassVar[int]
    GRP_TRES_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    RAW_USAGE_FIELD_NUMBER: _ClassVar[int]
    NORM_SHARES_FIELD_NUMBER: _ClassVar[int]
    NORM_USAGE_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_USAGE_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FS_FIELD_NUMBER: _ClassVar[int]
    FAIRSHARE_FIELD_NUMBER: _ClassVar[int]
    account: str
    user: str
    parent: str
    shares: int
    max_jobs: int
    max_submit: int
    grp_tres: str
    depth: int
    raw_usage: float
    norm_shares: float
    norm_usage: float
    effective_usage: float
    level_fs: float
    fairshare: float
    def __init__(self, account: _Optional[str] = ..., user: _Optional[str] = ..., parent: _Optional[str] = ..., shares: _Optional[int] = ..., max_jobs: _Optional[int] = ..., max_submit: _Optional[int] = ..., grp_tres: _Optional[str] = ..., depth: _Optional[int] = ..., raw_usage: _Optional[float] = ..., norm_shares: _Optional[float] = ..., norm_usage: _Optional[float] = ..., effective_usage: _Optional[float] = ..., level_fs: _Optional[float] = ..., fairshare: _Optional[float] = ...) -> None: ...

class AccountInfo(_message.Message):
    __slots__ = ("name", "description", "organization")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATION_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    organization: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., organization: _Optional[str] = ...) -> None: ...

class AcctUserInfo(_message.Message):
    __slots__ = ("name", "default_account", "admin")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_ACCOUNT_FIELD_NUMBER: _ClassVar[int]
    ADMIN_FIELD_NUMBER: _ClassVar[int]
    name: str
    default_account: str
    admin: str
    def __init__(self, name: _Optional[str] = ..., default_account: _Optional[str] = ..., admin: _Optional[str] = ...) -> None: ...

class QosInfo(_message.Message):
    __slots__ = ("name", "description", "priority", "max_jobs_pu", "max_submit_pu", "preempt", "preempt_mode")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    MAX_JOBS_PU_FIELD_NUMBER: _ClassVar[int]
    MAX_SUBMIT_PU_FIELD_NUMBER: _ClassVar[int]
    PREEMPT_FIELD_NUMBER: _ClassVar[int]
    PREEMPT_MODE_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    priority: int
    max_jobs_pu: int
    max_submit_pu: int
    preempt: str
    preempt_mode: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., priority: _Optional[int] = ..., max_jobs_pu: _Optional[int] = ..., max_submit_pu: _Optional[int] = ..., preempt: _Optional[str] = ..., preempt_mode: _Optional[str] = ...) -> None: ...

class GetAssocsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetAssocsReply(_message.Message):
    __slots__ = ("assocs", "accounts", "users", "cluster", "qos")
    ASSOCS_FIELD_NUMBER: _ClassVar[int]
    ACCOUNTS_FIELD_NUMBER: _ClassVar[int]
    USERS_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    QOS_FIELD_NUMBER: _ClassVar[int]
    assocs: _containers.RepeatedCompositeFieldContainer[AssocInfo]
    accounts: _containers.RepeatedCompositeFieldContainer[AccountInfo]
    users: _containers.RepeatedCompositeFieldContainer[AcctUserInfo]
    cluster: str
    qos: _containers.RepeatedCompositeFieldContainer[QosInfo]
    def __init__(self, assocs: _Optional[_Iterable[_Union[AssocInfo, _Mapping]]] = ..., accounts: _Optional[_Iterable[_Union[AccountInfo, _Mapping]]] = ..., users: _Optional[_Iterable[_Union[AcctUserInfo, _Mapping]]] = ..., cluster: _Optional[str] = ..., qos: _Optional[_Iterable[_Union[QosInfo, _Mapping]]] = ...) -> None: ...

class JobPriorityInfo(_message.Message):
    __slots__ = ("job_id", "partition", "user", "account", "priority", "age", "fairshare", "job_size", "partition_factor", "qos", "nice")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    AGE_FIELD_NUMBER: _ClassVar[int]
    FAIRSHARE_FIELD_NUMBER: _ClassVar[int]
    JOB_SIZE_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FACTOR_FIELD_NUMBER: _ClassVar[int]
    QOS_FIELD_NUMBER: _ClassVar[int]
    NICE_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    partition: str
    user: str
    account: str
    priority: int
    age: float
    fairshare: float
    job_size: float
    partition_factor: float
    qos: float
    nice: int
    def __init__(self, job_id: _Optional[int] = ..., partition: _Optional[str] = ..., user: _Optional[str] = ..., account: _Optional[str] = ..., priority: _Optional[int] = ..., age: _Optional[float] = ..., fairshare: _Optional[float] = ..., job_size: _Optional[float] = ..., partition_factor: _Optional[float] = ..., qos: _Optional[float] = ..., nice: _Optional[int] = ...) -> None: ...

class GetPrioritiesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetPrioritiesReply(_message.Message):
    __slots__ = ("jobs", "weights")
    class WeightsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    JOBS_FIELD_NUMBER: _ClassVar[int]
    WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[JobPriorityInfo]
    weights: _containers.ScalarMap[str, int]
    def __init__(self, jobs: _Optional[_Iterable[_Union[JobPriorityInfo, _Mapping]]] = ..., weights: _Optional[_Mapping[str, int]] = ...) -> None: ...

class ManageReservationRequest(_message.Message):
    __slots__ = ("verb", "name", "start_time", "end_time", "duration", "nodes", "node_count", "users", "accounts", "flags", "partition", "requester_uid")
    VERB_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    NODE_COUNT_FIELD_NUMBER: _ClassVar[int]
    USERS_FIELD_NUMBER: _ClassVar[int]
    ACCOUNTS_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FIELD_NUMBER: _ClassVar[int]
    REQUESTER_UID_FIELD_NUMBER: _ClassVar[int]
    verb: str
    name: str
    start_time: int
    end_time: int
    duration: int
    nodes: str
    node_count: int
    users: str
    accounts: str
    flags: str
    partition: str
    requester_uid: int
    def __init__(self, verb: _Optional[str] = ..., name: _Optional[str] = ..., start_time: _Optional[int] = ..., end_time: _Optional[int] = ..., duration: _Optional[int] = ..., nodes: _Optional[str] = ..., node_count: _Optional[int] = ..., users: _Optional[str] = ..., accounts: _Optional[str] = ..., flags: _Optional[str] = ..., partition: _Optional[str] = ..., requester_uid: _Optional[int] = ...) -> None: ...

class ManageReservationReply(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class ReservationInfo(_message.Message):
    __slots__ = ("name", "start_time", "end_time", "nodes", "core_count", "partition", "flags", "users", "accounts")
    NAME_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    CORE_COUNT_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    USERS_FIELD_NUMBER: _ClassVar[int]
    ACCOUNTS_FIELD_NUMBER: _ClassVar[int]
    name: str
    start_time: int
    end_time: int
    nodes: _containers.RepeatedScalarFieldContainer[str]
    core_count: int
    partition: str
    flags: str
    users: str
    accounts: str
    def __init__(self, name: _Optional[str] = ..., start_time: _Optional[int] = ..., end_time: _Optional[int] = ..., nodes: _Optional[_Iterable[str]] = ..., core_count: _Optional[int] = ..., partition: _Optional[str] = ..., flags: _Optional[str] = ..., users: _Optional[str] = ..., accounts: _Optional[str] = ...) -> None: ...

class GetReservationsRequest(_message.Message):
    __slots__ = ("names",)
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class GetReservationsReply(_message.Message):
    __slots__ = ("reservations", "now")
    RESERVATIONS_FIELD_NUMBER: _ClassVar[int]
    NOW_FIELD_NUMBER: _ClassVar[int]
    reservations: _containers.RepeatedCompositeFieldContainer[ReservationInfo]
    now: int
    def __init__(self, reservations: _Optional[_Iterable[_Union[ReservationInfo, _Mapping]]] = ..., now: _Optional[int] = ...) -> None: ...

class GetTokenRequest(_message.Message):
    __slots__ = ("username", "lifespan", "requester_uid")
    USERNAME_FIELD_NUMBER: _ClassVar[int]
    LIFESPAN_FIELD_NUMBER: _ClassVar[int]
    REQUESTER_UID_FIELD_NUMBER: _ClassVar[int]
    username: str
    lifespan: int
    requester_uid: int
    def __init__(self, username: _Optional[str] = ..., lifespan: _Optional[int] = ..., requester_uid: _Optional[int] = ...) -> None: ...

class GetTokenReply(_message.Message):
    __slots__ = ("token",)
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    token: str
    def __init__(self, token: _Optional[str] = ...) -> None: ...

class ReconfigureRequest(_message.Message):
    __slots__ = ("requester_uid",)
    REQUESTER_UID_FIELD_NUMBER: _ClassVar[int]
    requester_uid: int
    def __init__(self, requester_uid: _Optional[int] = ...) -> None: ...

class ReconfigureReply(_message.Message):
    __slots__ = ("restart_needed",)
    RESTART_NEEDED_FIELD_NUMBER: _ClassVar[int]
    restart_needed: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, restart_needed: _Optional[_Iterable[str]] = ...) -> None: ...

class TakeoverRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class TakeoverReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class BatchLaunchRequest(_message.Message):
    __slots__ = ("job", "spec", "cluster", "controller", "conf_path", "kill_wait", "node")
    JOB_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    CONTROLLER_FIELD_NUMBER: _ClassVar[int]
    CONF_PATH_FIELD_NUMBER: _ClassVar[int]
    KILL_WAIT_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    job: JobInfo
    spec: JobSpec
    cluster: str
    controller: str
    conf_path: str
    kill_wait: int
    node: str
    def __init__(self, job: _Optional[_Union[JobInfo, _Mapping]] = ..., spec: _Optional[_Union[JobSpec, _Mapping]] = ..., cluster: _Optional[str] = ..., controller: _Optional[str] = ..., conf_path: _Optional[str] = ..., kill_wait: _Optional[int] = ..., node: _Optional[str] = ...) -> None: ...

class BatchLaunchReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SignalJobRequest(_message.Message):
    __slots__ = ("job_id", "signal", "batch_only", "full", "node")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    BATCH_ONLY_FIELD_NUMBER: _ClassVar[int]
    FULL_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    signal: int
    batch_only: bool
    full: bool
    node: str
    def __init__(self, job_id: _Optional[int] = ..., signal: _Optional[int] = ..., batch_only: _Optional[bool] = ..., full: _Optional[bool] = ..., node: _Optional[str] = ...) -> None: ...

class SignalJobReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class TerminateJobRequest(_message.Message):
    __slots__ = ("job_id", "outcome", "kill_wait", "time", "node", "job")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    KILL_WAIT_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    outcome: str
    kill_wait: int
    time: int
    node: str
    job: ScriptJob
    def __init__(self, job_id: _Optional[int] = ..., outcome: _Optional[str] = ..., kill_wait: _Optional[int] = ..., time: _Optional[int] = ..., node: _Optional[str] = ..., job: _Optional[_Union[ScriptJob, _Mapping]] = ...) -> None: ...

class ScriptJob(_message.Message):
    __slots__ = ("job_id", "uid", "gid", "user", "partition", "account", "work_dir", "restarts", "nodelist", "num_nodes", "cpus_per_node", "gpus", "exit_code", "signal")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    GID_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_FIELD_NUMBER: _ClassVar[int]
    WORK_DIR_FIELD_NUMBER: _ClassVar[int]
    RESTARTS_FIELD_NUMBER: _ClassVar[int]
    NODELIST_FIELD_NUMBER: _ClassVar[int]
    NUM_NODES_FIELD_NUMBER: _ClassVar[int]
    CPUS_PER_NODE_FIELD_NUMBER: _ClassVar[int]
    GPUS_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    uid: int
    gid: int
    user: str
    partition: str
    account: str
    work_dir: str
    restarts: int
    nodelist: str
    num_nodes: int
    cpus_per_node: str
    gpus: _containers.RepeatedScalarFieldContainer[int]
    exit_code: int
    signal: int
    def __init__(self, job_id: _Optional[int] = ..., uid: _Optional[int] = ..., gid: _Optional[int] = ..., user: _Optional[str] = ..., partition: _Optional[str] = ..., account: _Optional[str] = ..., work_dir: _Optional[str] = ..., restarts: _Optional[int] = ..., nodelist: _Optional[str] = ..., num_nodes: _Optional[int] = ..., cpus_per_node: _Optional[str] = ..., gpus: _Optional[_Iterable[int]] = ..., exit_code: _Optional[int] = ..., signal: _Optional[int] = ...) -> None: ...

class TerminateJobReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RebootNodeRequest(_message.Message):
    __slots__ = ("node",)
    NODE_FIELD_NUMBER: _ClassVar[int]
    node: str
    def __init__(self, node: _Optional[str] = ...) -> None: ...

class RebootNodeReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RunPrologRequest(_message.Message):
    __slots__ = ("node", "job")
    NODE_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    node: str
    job: ScriptJob
    def __init__(self, node: _Optional[str] = ..., job: _Optional[_Union[ScriptJob, _Mapping]] = ...) -> None: ...

class RunPrologReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ReconfigureAgentRequest(_message.Message):
    __slots__ = ("node",)
    NODE_FIELD_NUMBER: _ClassVar[int]
    node: str
    def __init__(self, node: _Optional[str] = ...) -> None: ...

class ReconfigureAgentReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class AgentPingRequest(_message.Message):
    __slots__ = ("node",)
    NODE_FIELD_NUMBER: _ClassVar[int]
    node: str
    def __init__(self, node: _Optional[str] = ...) -> None: ...

class AgentPingReply(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class LaunchTasksRequest(_message.Message):
    __slots__ = ("credential", "job_id", "step_id", "argv", "environment", "cwd", "stdout", "stderr", "stdin", "stdin_all", "gpu_bind", "unbuffered", "umask", "kill_wait", "kill_on_bad_exit", "master_addr", "master_port", "cluster", "conf_path", "job", "step", "launch_host", "open_append", "pty", "window", "preserve_env", "node", "task_prolog", "task_epilog")
    class EnvironmentEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    ARGV_FIELD_NUMBER: _ClassVar[int]
    ENVIRONMENT_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    STDOUT_FIELD_NUMBER: _ClassVar[int]
    STDERR_FIELD_NUMBER: _ClassVar[int]
    STDIN_FIELD_NUMBER: _ClassVar[int]
    STDIN_ALL_FIELD_NUMBER: _ClassVar[int]
    GPU_BIND_FIELD_NUMBER: _ClassVar[int]
    UNBUFFERED_FIELD_NUMBER: _ClassVar[int]
    UMASK_FIELD_NUMBER: _ClassVar[int]
    KILL_WAIT_FIELD_NUMBER: _ClassVar[int]
    KILL_ON_BAD_EXIT_FIELD_NUMBER: _ClassVar[int]
    MASTER_ADDR_FIELD_NUMBER: _ClassVar[int]
    MASTER_PORT_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    CONF_PATH_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    LAUNCH_HOST_FIELD_NUMBER: _ClassVar[int]
    OPEN_APPEND_FIELD_NUMBER: _ClassVar[int]
    PTY_FIELD_NUMBER: _ClassVar[int]
    WINDOW_FIELD_NUMBER: _ClassVar[int]
    PRESERVE_ENV_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    TASK_PROLOG_FIELD_NUMBER: _ClassVar[int]
    TASK_EPILOG_FIELD_NUMBER: _ClassVar[int]
    credential: SignedCredential
    job_id: int
    step_id: int
    argv: _containers.RepeatedScalarFieldContainer[str]
    environment: _containers.ScalarMap[str, str]
    cwd: str
    stdout: str
    stderr: str
    stdin: str
    stdin_all: bool
    gpu_bind: str
    unbuffered: bool
    umask: int
    kill_wait: int
    kill_on_bad_exit: bool
    master_addr: str
    master_port: int
    cluster: str
    conf_path: str
    job: JobInfo
    step: StepInfo
    launch_host: str
    open_append: bool
    pty: bool
    window: WindowSize
    preserve_env: bool
    node: str
    task_prolog: str
    task_epilog: str
    def __init__(self, credential: _Optional[_Union[SignedCredential, _Mapping]] = ..., job_id: _Optional[int] = ..., step_id: _Optional[int] = ..., argv: _Optional[_Iterable[str]] = ..., environment: _Optional[_Mapping[str, str]] = ..., cwd: _Optional[str] = ..., stdout: _Optional[str] = ..., stderr: _Optional[str] = ..., stdin: _Optional[str] = ..., stdin_all: _Optional[bool] = ..., gpu_bind: _Optional[str] = ..., unbuffered: _Optional[bool] = ..., umask: _Optional[int] = ..., kill_wait: _Optional[int] = ..., kill_on_bad_exit: _Optional[bool] = ..., master_addr: _Optional[str] = ..., master_port: _Optional[int] = ..., cluster: _Optional[str] = ..., conf_path: _Optional[str] = ..., job: _Optional[_Union[JobInfo, _Mapping]] = ..., step: _Optional[_Union[StepInfo, _Mapping]] = ..., launch_host: _Optional[str] = ..., open_append: _Optional[bool] = ..., pty: _Optional[bool] = ..., window: _Optional[_Union[WindowSize, _Mapping]] = ..., preserve_env: _Optional[bool] = ..., node: _Optional[str] = ..., task_prolog: _Optional[str] = ..., task_epilog: _Optional[str] = ...) -> None: ...

class WindowSize(_message.Message):
    __slots__ = ("rows", "cols")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    COLS_FIELD_NUMBER: _ClassVar[int]
    rows: int
    cols: int
    def __init__(self, rows: _Optional[int] = ..., cols: _Optional[int] = ...) -> None: ...

class TaskEvent(_message.Message):
    __slots__ = ("kind", "task_id", "data", "exit_code", "signal", "node", "error")
    class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        STARTED: _ClassVar[TaskEvent.Kind]
        STDOUT: _ClassVar[TaskEvent.Kind]
        STDERR: _ClassVar[TaskEvent.Kind]
        EXITED: _ClassVar[TaskEvent.Kind]
        NODE_DONE: _ClassVar[TaskEvent.Kind]
        ABORTED: _ClassVar[TaskEvent.Kind]
    STARTED: TaskEvent.Kind
    STDOUT: TaskEvent.Kind
    STDERR: TaskEvent.Kind
    EXITED: TaskEvent.Kind
    NODE_DONE: TaskEvent.Kind
    ABORTED: TaskEvent.Kind
    KIND_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    kind: TaskEvent.Kind
    task_id: int
    data: bytes
    exit_code: int
    signal: int
    node: str
    error: str
    def __init__(self, kind: _Optional[_Union[TaskEvent.Kind, str]] = ..., task_id: _Optional[int] = ..., data: _Optional[bytes] = ..., exit_code: _Optional[int] = ..., signal: _Optional[int] = ..., node: _Optional[str] = ..., error: _Optional[str] = ...) -> None: ...

class TaskInputRequest(_message.Message):
    __slots__ = ("job_id", "step_id", "task_id", "data", "eof", "credential", "window", "node")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    EOF_FIELD_NUMBER: _ClassVar[int]
    CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    WINDOW_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    step_id: int
    task_id: int
    data: bytes
    eof: bool
    credential: SignedCredential
    window: WindowSize
    node: str
    def __init__(self, job_id: _Optional[int] = ..., step_id: _Optional[int] = ..., task_id: _Optional[int] = ..., data: _Optional[bytes] = ..., eof: _Optional[bool] = ..., credential: _Optional[_Union[SignedCredential, _Mapping]] = ..., window: _Optional[_Union[WindowSize, _Mapping]] = ..., node: _Optional[str] = ...) -> None: ...

class TaskInputReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SignalTasksRequest(_message.Message):
    __slots__ = ("job_id", "step_id", "signal", "credential", "terminate", "node")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    TERMINATE_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    step_id: int
    signal: int
    credential: SignedCredential
    terminate: bool
    node: str
    def __init__(self, job_id: _Optional[int] = ..., step_id: _Optional[int] = ..., signal: _Optional[int] = ..., credential: _Optional[_Union[SignedCredential, _Mapping]] = ..., terminate: _Optional[bool] = ..., node: _Optional[str] = ...) -> None: ...

class SignalTasksReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class AttachStepRequest(_message.Message):
    __slots__ = ("credential", "job_id", "step_id", "node")
    CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    credential: SignedCredential
    job_id: int
    step_id: int
    node: str
    def __init__(self, credential: _Optional[_Union[SignedCredential, _Mapping]] = ..., job_id: _Optional[int] = ..., step_id: _Optional[int] = ..., node: _Optional[str] = ...) -> None: ...
