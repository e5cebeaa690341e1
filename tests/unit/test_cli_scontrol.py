"""Tests of scontrol against real Slurm's captures (cli.scontrol, scontrol_show, scontrol_update).

Records are rebuilt as reply messages from the reference cluster's values;
the controller is replaced by a function, so no socket is opened.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest

from cli import common, scontrol, scontrol_hold, scontrol_jobupdate, scontrol_update
from cli import scontrol_show as show
from minislurm import VERSION_LINE
from minislurm.units import INFINITE, parse_timestamp
from minislurm.wire.h2grpc import RpcError
from minislurm.wire.protowire import Message

REF = Path(__file__).resolve().parents[3] / "shared" / "reference" / "outputs"


def reference(name: str) -> tuple[str, str, int]:
    """(stdout, stderr, exit status) of a capture."""
    text = (REF / name).read_text()
    out = text.split("--- stdout ---\n", 1)[1].split("--- stderr ---\n", 1)[0]
    err = text.split("--- stderr ---\n", 1)[1].split("--- exit: ", 1)[0]
    status = int(text.rsplit("--- exit: ", 1)[1].split(" ", 1)[0])
    return out, err, status


def at(clock: str) -> int:
    return parse_timestamp(f"2026-11-30T{clock}")


def job(job_id: int, name: str, state: str, **fields: Any) -> Message:
    base: dict[str, Any] = {
        "job_id": job_id,
        "name": name,
        "state": state,
        "partition": "gpu",
        "user": "root",
        "uid": 0,
        "group": "root",
        "gid": 0,
        "account": "root",
        "qos": "normal",
        "time_limit": INFINITE,
        "min_nodes": 1,
        "num_cpus": 1,
        "num_tasks": 1,
        "cpus_per_task": 1,
        "batch": True,
        "requeue": True,
        "work_dir": "/cluster/work",
        "submit_host": "localhost",
        "reason": "None",
        "stdin": "/dev/null",
        "stdout": f"/cluster/work/slurm-{job_id}.out",
        "stderr": f"/cluster/work/slurm-{job_id}.out",
        "tres": "cpu=1,mem=8000M,node=1,billing=1",
    }
    base.update(fields)
    return Message("minislurm.v1.JobInfo", base)


RUNNING = job(
    14,
    "running",
    "RUNNING",
    priority=4294901750,
    run_time=3,
    time_limit=5,
    num_cpus=2,
    num_tasks=2,
    nodes="n1",
    batch_host="n1",
    submit_time=at("04:26:06"),
    eligible_time=at("04:26:06"),
    accrue_time=at("04:26:06"),
    start_time=at("04:26:09"),
    end_time=at("04:31:09"),
    last_sched_eval=at("04:26:09"),
    tres="cpu=2,node=1,billing=2,gres/gpu=2",
    tres_per_node="gres:gpu:2",
    gpus_per_node=2,
    allocation=[{"node": "n1", "cpus": 2, "mem": 0, "gpus": [0, 1], "ntasks": 2}],
)
JOBS = {
    "scontrol_show_job_running.txt": RUNNING,
    "scontrol_show_job_pending_held.txt": job(
        15,
        "held",
        "PENDING",
        reason="JobHeldUser",
        submit_time=at("04:26:09"),
        last_sched_eval=at("04:26:09"),
    ),
    "scontrol_show_job_after_user_hold.txt": job(
        18,
        "prio",
        "PENDING",
        reason="JobHeldAdmin",
        submit_time=at("04:26:09"),
        accrue_time=at("04:26:09"),
        last_sched_eval=at("04:26:12"),
        min_nodes=2,
        max_nodes=2,
        num_cpus=2,
        num_tasks=2,
        tres="cpu=2,mem=16000M,node=2,billing=2,gres/gpu=16",
        tres_per_node="gres:gpu:8",
    ),
    "scontrol_show_job_too_many_nodes.txt": job(
        24,
        "toomanynodes",
        "PENDING",
        priority=4294901740,
        reason="PartitionConfig",
        submit_time=at("04:26:15"),
        eligible_time=at("04:26:15"),
        last_sched_eval=at("04:26:15"),
        min_nodes=3,
        max_nodes=3,
        num_cpus=3,
        num_tasks=3,
        tres="cpu=3,mem=24000M,node=3,billing=3",
    ),
    "scontrol_show_job_completed.txt": job(
        20,
        "ok",
        "COMPLETED",
        priority=4294901744,
        submit_time=at("04:26:14"),
        eligible_time=at("04:26:14"),
        accrue_time=at("04:26:14"),
        start_time=at("04:26:15"),
        end_time=at("04:26:15"),
        last_sched_eval=at("04:26:15"),
        nodes="n1",
        batch_host="n1",
        tres="cpu=1,node=1,billing=1",
        stdout="/cluster/work/slurm-ok-20.out",
        stderr="/cluster/work/slurm-ok-20.out",
    ),
    "scontrol_show_job_failed.txt": job(
        21,
        "fail3",
        "FAILED",
        priority=4294901743,
        reason="NonZeroExitCode",
        exit_code=3,
        submit_time=at("04:26:14"),
        eligible_time=at("04:26:14"),
        accrue_time=at("04:26:14"),
        start_time=at("04:26:15"),
        end_time=at("04:26:15"),
        last_sched_eval=at("04:26:15"),
        nodes="n1",
        batch_host="n1",
        tres="cpu=1,node=1,billing=1",
    ),
    "scontrol_show_job_timeout.txt": job(
        1,
        "timeout",
        "TIMEOUT",
        priority=4294901759,
        reason="TimeLimit",
        exit_signal=15,
        run_time=87,
        time_limit=1,
        submit_time=at("04:25:54"),
        eligible_time=at("04:25:54"),
        accrue_time=at("04:25:54"),
        start_time=at("04:25:57"),
        end_time=at("04:27:24"),
        last_sched_eval=at("04:25:57"),
        nodes="n1",
        batch_host="n1",
        tres="cpu=1,node=1,billing=1",
        stdout="/cluster/work/timeout-1.out",
        stderr="/cluster/work/timeout-1.out",
    ),
}


def adapted(text: str) -> str:
    """The capture with what JobInfo cannot carry as we print it: the session id
    (Sid) and the CPU ids of -d (NodeAllocation has a count only)."""
    return text.replace("AllocNode:Sid=localhost:2829", "AllocNode:Sid=localhost:0").replace(
        "CPU_IDs=1-2", "CPU_IDs=0-1"
    )


# --------------------------------------------------------------------------- show job


@pytest.mark.parametrize("capture", sorted(JOBS))
def test_job_record_matches_real_scontrol(capture: str) -> None:
    assert show.job_text(JOBS[capture]) == adapted(reference(capture)[0])


def test_oneliner_job_record_matches_real_scontrol() -> None:
    expected = adapted(reference("scontrol_show_job_running_oneliner.txt")[0])
    assert show.job_text(RUNNING, oneliner=True) == expected


def test_detailed_job_record_matches_real_scontrol() -> None:
    expected = adapted(reference("scontrol_show_job_running_multinode_detail.txt")[0])
    assert show.job_text(RUNNING, details=True) == expected


@pytest.mark.parametrize(
    ("fields", "item"),
    [
        ({"min_nodes": 1, "max_nodes": 2}, "NumNodes=1-2 "),
        ({"min_nodes": 2, "max_nodes": 0}, "NumNodes=2 "),
        ({"nodes": "n[1-2]", "min_nodes": 1, "max_nodes": 0}, "NumNodes=2 "),
        ({"mem_per_node": 2048}, "MinMemoryNode=2G "),
        ({"mem_per_cpu": 100}, "MinMemoryCPU=100M "),
        ({"cpus_per_task": 2, "ntasks_per_node": 2}, "MinCPUsNode=4 "),
        ({"req_nodes": "n1", "exc_nodes": "n2"}, "ReqNodeList=n1 ExcNodeList=n2"),
        ({"gpus": 2}, "TresPerJob=gres:gpu:2"),
        ({"gpus_per_task": 1}, "TresPerTask=gres:gpu:1"),
        ({"nice": 10}, "Nice=10 "),
    ],
)
def test_job_record_follows_the_request(fields: dict[str, Any], item: str) -> None:
    record = show.job_text(job(8, "x", "PENDING", **fields))
    assert item in record


def test_job_record_of_a_job_without_batch_script_has_no_std_paths() -> None:
    record = show.job_text(job(12, "bash", "COMPLETED", batch=False, command="true"))
    assert "StdOut=" not in record and "Command=true" in record
    assert record.endswith("Power=\n   \n\n")


def test_detail_lines_list_each_nodes_share() -> None:
    multinode = job(
        9,
        "run2",
        "RUNNING",
        nodes="n[1-2]",
        allocation=[
            {"node": "n1", "cpus": 2, "mem": 0, "gpus": [0], "ntasks": 2},
            {"node": "n2", "cpus": 2, "mem": 512, "gpus": [0, 1, 2, 5], "ntasks": 2},
        ],
    )
    record = show.job_text(multinode, details=True)
    assert "   JOB_GRES=gpu:5\n     Nodes=n1 CPU_IDs=0-1 Mem=0 GRES=gpu:1(IDX:0)\n" in record
    assert "     Nodes=n2 CPU_IDs=0-1 Mem=512 GRES=gpu:4(IDX:0-2,5)\n" in record
    plain = show.job_text(
        job(3, "cpu", "COMPLETED", allocation=[{"node": "n1", "cpus": 1}]), details=True
    )
    assert "   JOB_GRES=(null)\n     Nodes=n1 CPU_IDs=0 Mem=0 GRES=\n" in plain


def test_detail_lines_join_neighbouring_nodes_that_hold_the_same() -> None:
    share = {"cpus": 1, "mem": 0, "gpus": [0], "ntasks": 1}
    nodes = [{"node": n, **share} for n in ("n1", "n2", "n3")]
    nodes.insert(2, {"node": "n4", "cpus": 2, "mem": 0, "gpus": [0], "ntasks": 1})
    record = show.job_text(job(9, "run", "RUNNING", allocation=nodes), details=True)
    assert "     Nodes=n[1-2] CPU_IDs=0 Mem=0 GRES=gpu:1(IDX:0)\n" in record  # as Slurm's
    assert "     Nodes=n4 CPU_IDs=0-1 Mem=0 GRES=gpu:1(IDX:0)\n" in record
    assert "     Nodes=n3 CPU_IDs=0 Mem=0 GRES=gpu:1(IDX:0)\n" in record


# --------------------------------------------------------------------- show node, partition, config


def node(name: str, addr: str, alloc: int, state: str, busy: str, **fields: Any) -> Message:
    base: dict[str, Any] = {
        "name": name,
        "addr": addr,
        "hostname": name,
        "arch": "x86_64",
        "cores_per_socket": 8,
        "cpus": 8,
        "alloc_cpus": alloc,
        "cpu_load": 1.53,
        "gres": "gpu:8",
        "gpus": 8,
        "alloc_gpus": 2 if alloc else 0,
        "version": "22.05.8",
        "os": "Linux 6.18.44-fc-v857 #1 SMP PREEMPT_DYNAMIC @0",
        "real_memory": 8000,
        "free_memory": 22440,
        "sockets": 1,
        "state": state,
        "threads_per_core": 1,
        "weight": 1,
        "partitions": ["gpu", "debug"],
        "boot_time": at("04:09:33"),
        "slurmd_start_time": at("04:25:54"),
        "last_busy_time": at(busy),
    }
    base.update(fields)
    return Message("minislurm.v1.NodeInfo", base)


NODES = [
    node("n1", "10.233.2.11", 3, "MIXED", "04:25:54"),
    node("n2", "10.233.2.12", 0, "IDLE", "04:26:06"),
]


def partition(name: str, default: bool, max_time: int) -> Message:
    return Message(
        "minislurm.v1.PartitionInfo",
        {
            "name": name,
            "nodes": "n[1-2]",
            "default": default,
            "max_time": max_time,
            "max_nodes": INFINITE,
            "priority_tier": 1,
            "priority_job_factor": 1,
            "allow_accounts": "ALL",
            "allow_groups": "ALL",
            "state": "UP",
            "over_subscribe": "NO",
            "total_cpus": 16,
            "total_nodes": 2,
            "tres": "cpu=16,mem=16000M,node=2,billing=16,gres/gpu=16",
        },
    )


PARTITIONS = [partition("gpu", True, INFINITE), partition("debug", False, 60)]


def test_node_records_match_real_scontrol() -> None:
    assert "".join(show.node_text(n) for n in NODES) == reference("scontrol_show_node.txt")[0]


def test_oneliner_node_record_matches_real_scontrol() -> None:
    expected = reference("scontrol_show_node_n1_oneliner.txt")[0]
    assert show.node_text(NODES[0], oneliner=True) == expected


def test_node_record_ends_with_its_reason_and_who_set_it() -> None:
    drained = node(
        "n2",
        "10.233.2.12",
        0,
        "IDLE+DRAIN",
        "04:26:06",
        reason="maint work",
        reason_user="0",
        reason_time=at("06:25:17"),
    )
    assert show.node_text(drained).endswith("\n   Reason=maint work [root@2026-11-30T06:25:17]\n\n")


def test_partition_records_match_real_scontrol() -> None:
    text = "".join(show.partition_text(p) for p in PARTITIONS)
    assert text == reference("scontrol_show_partition.txt")[0]


def test_oneliner_partition_record_joins_its_lines_with_spaces() -> None:
    line = show.partition_text(PARTITIONS[1], oneliner=True)
    assert line.startswith("PartitionName=debug AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL ")
    assert line.endswith(" TRES=cpu=16,mem=16000M,node=2,billing=16,gres/gpu=16\n")
    assert "\n" not in line[:-1]


def test_config_lines_are_padded_as_slurm_pads_them() -> None:
    expected = reference("scontrol_show_config_sched.txt")[0].splitlines()
    entries = [
        Message("minislurm.v1.ConfigEntry", {"key": k.strip(), "value": v})
        for k, v in (line.split(" = ", 1) for line in expected)
    ]
    text = show.config_text(entries, at("04:26:12"))
    assert text.splitlines() == ["Configuration data as of 2026-11-30T04:26:12", *expected, ""]
    assert show.config_text(
        [
            Message(
                "minislurm.v1.ConfigEntry",
                {"key": "AccountingStorageBackupHost", "value": "(null)"},
            )
        ],
        0,
    ).splitlines()[1] == ("AccountingStorageBackupHost = (null)")


# --------------------------------------------------------------------------- commands


class Fake:
    """Answers the calls scontrol makes, recording them."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.replies: dict[str, Any] = {}

    def __call__(self, method: str, **request: Any) -> Message:
        self.calls.append((method, request))
        reply = self.replies.get(method, {})
        if isinstance(reply, Exception):
            raise reply
        return Message(f"minislurm.v1.{method}Reply", reply)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Fake:
    calls = Fake()
    monkeypatch.setattr(common, "call", calls)
    monkeypatch.setattr(common, "call_at", lambda host, method, **request: calls(method, **request))
    return calls


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, str, int]:
    status = scontrol.main(argv)
    captured = capsys.readouterr()
    return captured.out, captured.err, status


@pytest.mark.parametrize(
    "argv",
    [
        ["show", "job", "14"],
        ["sho", "jo", "14"],
        ["show", "job", "-o", "14"],
        ["-d", "show", "jobs", "14"],
    ],
)
def test_show_job_accepts_abbreviations_and_options_anywhere(
    fake: Fake, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    fake.replies["GetJobs"] = {"jobs": [RUNNING.to_dict()], "now": 0}
    out, err, status = run(argv, capsys)
    assert out.startswith("JobId=14 JobName=running") and (err, status) == ("", 0)
    assert fake.calls == [("GetJobs", {"all_states": True, "job_ids": [14]})]
    assert ("\n" not in out[:-1]) == ("-o" in argv)
    assert ("DerivedExitCode" in out) == ("-d" in argv)


def test_show_unknown_job_is_slurm_load_jobs_error(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.replies["GetJobs"] = RpcError("NOT_FOUND", "Invalid job id specified")
    assert run(["show", "job", "999999"], capsys) == reference("err_scontrol_show_job_999999.txt")


def test_show_unknown_partition_says_not_found(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["show", "partition", "nosuch"], capsys) == ("Partition nosuch not found\n", "", 1)
    assert fake.calls == [("GetPartitions", {"names": ["nosuch"]})]


def test_show_node_expands_a_hostlist(fake: Fake, capsys: pytest.CaptureFixture[str]) -> None:
    fake.replies["GetNodes"] = {"nodes": [n.to_dict() for n in NODES]}
    out, _, status = run(["show", "node", "n[1-2]"], capsys)
    assert (out, status) == (reference("scontrol_show_node.txt")[0], 0)
    assert fake.calls == [("GetNodes", {"names": ["n1", "n2"]})]


@pytest.mark.parametrize(
    ("capture", "argv"),
    [
        ("scontrol_show_hostnames.txt", ["show", "hostnames", "n[1-2]"]),
        ("scontrol_show_hostnames_complex.txt", ["show", "hostnames", "a[01-03,7],b1"]),
        ("scontrol_show_hostlist.txt", ["show", "hostlist", "n1,n2,n3,n5"]),
    ],
)
def test_hostlist_commands_match_real_scontrol(
    fake: Fake, capsys: pytest.CaptureFixture[str], capture: str, argv: list[str]
) -> None:
    assert run(argv, capsys) == reference(capture)
    assert fake.calls == []


def test_hostlistsorted_sorts(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["show", "hostlistsorted", "n3,n1,n2"], capsys) == ("n[1-3]\n", "", 0)


@pytest.mark.parametrize(
    ("argv", "result"),
    [
        # Slurm 22.05: hostnames says a hostlist is invalid but succeeds; hostlist fails.
        (["show", "hostnames", "n[a-b]"], ("", "Invalid hostlist: n[a-b]\n", 0)),
        (["show", "hostlist", "n[3-1]"], ("", "Invalid hostlist: n[3-1]\n", 1)),
        (["show", "hostnames", "n[1-"], ("n]\n", "", 0)),
        (["show", "hostnames", ""], ("", "", 0)),
        (["show", "hostlist", ""], ("\n", "", 0)),
    ],
)
def test_hostlist_commands_with_bad_or_empty_lists(
    capsys: pytest.CaptureFixture[str], argv: list[str], result: tuple[str, str, int]
) -> None:
    assert run(argv, capsys) == result


@pytest.mark.parametrize(
    ("argv", "err"),
    [
        (["bogus"], "invalid keyword: bogus\n"),
        (["show"], "too few arguments for keyword:show\n"),
        (["show", "job", "1", "2"], "too many arguments for keyword:show\n"),
        (["show", "bogus"], "invalid entity:bogus for keyword:show \n"),
        (["show", "job", "abc"], "scontrol_print_job error: Invalid job id specified\n"),
        (["hold"], "too few arguments for keyword:hold\n"),
    ],
)
def test_command_errors_use_slurms_words(
    fake: Fake, capsys: pytest.CaptureFixture[str], argv: list[str], err: str
) -> None:
    assert run(argv, capsys) == ("", err, 1)


@pytest.mark.parametrize(
    ("argv", "action"), [(["hold", "18"], 0), (["uhold", "18"], 1), (["release", "18"], 2)]
)
def test_hold_commands_are_silent_on_success(
    fake: Fake, capsys: pytest.CaptureFixture[str], argv: list[str], action: int
) -> None:
    fake.replies["HoldJobs"] = {"results": [{"job_id": 18}]}
    assert run(argv, capsys) == reference("scontrol_hold.txt")
    assert fake.calls[0][1]["action"] == action and fake.calls[0][1]["job_ids"] == [18]


def test_hold_of_an_unknown_job_matches_real_scontrol(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.replies["HoldJobs"] = {
        "results": [{"job_id": 999999, "error": "Invalid job id specified"}]
    }
    assert run(["hold", "999999"], capsys) == reference("scontrol_hold_bad.txt")


def test_hold_when_the_controller_is_down_reports_each_job(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.replies["HoldJobs"] = RpcError("UNAVAILABLE", "refused")
    assert run(["hold", "5"], capsys) == (
        "",
        (
            "Unable to contact slurm controller (connect failure) for job 5\n"
            "slurm_suspend error: Unable to contact slurm controller (connect failure)\n"
        ),
        1,
    )


def test_an_argument_that_is_not_a_job_list_is_one_bad_job_id(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    _, err, status = run(["hold", "13,abc"], capsys)
    assert err == (
        "Invalid job id specified for job 13,abc\nslurm_suspend error: Invalid job id specified\n"
    )
    assert status == 1 and fake.calls == []


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ("12", ["12"]),
        ("12,13 14", ["12", "13", "14"]),
        ("12_[1-3,5],13_4", ["12_[1-3,5]", "13_4"]),
        ("12_1-3", ["12_1-3"]),
        ("", []),
        ("1-3", None),
        ("7_1_2", None),
        ("12_[1-3", None),
        ("abc", None),
        ("Name=x", None),
    ],
)
def test_job_lists_are_split_and_checked_as_slurm_does(text: str, items: list[str] | None) -> None:
    assert scontrol_hold.job_items(text) == items


@pytest.mark.parametrize(
    ("word", "action"),
    [
        ("hold", 0),
        ("holdx", 0),
        ("holdu", 1),
        ("uhold", 1),
        ("rel", 2),
        ("releas", 2),
        ("req", 3),
        ("requeue", 3),
        ("requeuehold", 4),
        ("hol", None),
        ("uhol", None),
        ("re", None),
        ("releasex", None),
        ("requeueh", None),
    ],
)
def test_hold_keywords_match_as_slurms(word: str, action: int | None) -> None:
    assert scontrol_hold.hold_keyword(word) == action


def test_each_job_of_a_list_is_its_own_call_and_reported_alone(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.replies["HoldJobs"] = {"results": [{"job_id": 13, "error": "Job has already finished"}]}
    _, err, status = run(["release", "JobId=13,14"], capsys)
    assert err == (
        "Job has already finished for job 13\n"
        "Job has already finished for job 14\n"
        "slurm_suspend error: Job has already finished\n"
    )
    assert status == 1 and [c[1]["job_ids"] for c in fake.calls] == [[13], [14]]


def test_requeue_errors_have_no_slurm_suspend_line(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.replies["HoldJobs"] = {"results": [{"job_id": 5, "error": "Job is pending execution"}]}
    assert run(["requeue", "5", "abc"], capsys) == (
        "",
        "Job is pending execution for job 5\nInvalid job id specified for job abc\n",
        1,
    )


@pytest.mark.parametrize(
    ("item", "results", "err"),
    [
        ("20", [{"job_id": 20, "array_ref": "20_0-3"}], ""),
        (
            "20_9",
            [{"ref": "20_9", "error": "Invalid job id specified"}],
            "20_9: Invalid job id specified\n",
        ),
        (
            "20_[2-7]",
            [{"job_id": 31, "array_ref": "20_2"}, {"job_id": 32, "array_ref": "20_3"}],
            "20_2-3: No error\n20_4-7: Invalid job id specified\n",
        ),
        (
            "20",
            [{"job_id": 20, "array_ref": "20_0-3", "error": "Job is pending execution"}],
            "20_0-3: Job is pending execution\n",
        ),
    ],
)
def test_arrays_are_reported_per_group_of_tasks_as_slurm_does(
    fake: Fake,
    capsys: pytest.CaptureFixture[str],
    item: str,
    results: list[dict[str, Any]],
    err: str,
) -> None:
    fake.replies["HoldJobs"] = {"results": results}
    assert run(["release", item], capsys) == ("", err, int(bool(err)))


def test_hold_by_name_acts_on_every_job_of_that_name(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    done = job(3, "train", "COMPLETED")
    fake.replies["GetJobs"] = {"jobs": [job(7, "train", "PENDING").to_dict(), done.to_dict()]}
    fake.replies["HoldJobs"] = {"results": [{"job_id": 3, "error": "Job has already finished"}]}
    _, err, status = run(["hold", "Name=train"], capsys)
    assert err == (
        "Job has already finished for job 3\n"
        "Job has already finished for job 7\n"
        "slurm_suspend error: Job has already finished\n"
    )
    assert status == 1
    assert fake.calls[0] == ("GetJobs", {"names": ["train"], "all_states": True})
    assert [c[1]["job_ids"] for c in fake.calls[1:]] == [[3], [7]]


def test_quiet_keeps_only_invalid_keyword(fake: Fake, capsys: pytest.CaptureFixture[str]) -> None:
    fake.replies["HoldJobs"] = {"results": [{"job_id": 5, "error": "Invalid job id specified"}]}
    assert run(["-Q", "hold", "5"], capsys) == ("", "", 1)
    assert run(["-Q", "bogus"], capsys) == ("", "invalid keyword: bogus\n", 1)


def test_ping_names_the_controller(
    fake: Fake,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=c\nSlurmctldHost=vm(10.233.0.1)\n")
    monkeypatch.setenv("SLURM_CONF", str(conf))
    assert run(["ping"], capsys) == ("Slurmctld(primary) at vm is UP\n", "", 0)
    fake.replies["Ping"] = RpcError("UNAVAILABLE", "refused")
    assert run(["ping"], capsys) == (
        "Slurmctld(primary) at vm is DOWN\n"
        "*****************************************\n"
        "** RESTORE SLURMCTLD DAEMON TO SERVICE **\n"
        "*****************************************\n",
        "",
        1,
    )


def test_version_prints_the_version_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["version"], capsys) == (VERSION_LINE + "\n", "", 0)


# --------------------------------------------------------------------------- update


@pytest.mark.parametrize(
    ("argv", "changes"),
    [
        (["update", "JobId=3", "TimeLimit=20"], {"time_limit": 20}),
        (["update", "jobid=3", "timelimit=1-0"], {"time_limit": 1440}),
        (["update", "JobId=3", "Name=new"], {"name": "new"}),
        (["update", "JobName=new", "JobId=3"], {"name": "new"}),
        (["update", "JobId=3", "Partition=debug", "Nice=-5"], {"partition": "debug", "nice": -5}),
        (["update", "JobId=3", "Nice=abc"], {"nice": 0}),
    ],
)
def test_update_job_sends_the_changed_fields(
    fake: Fake, capsys: pytest.CaptureFixture[str], argv: list[str], changes: dict[str, Any]
) -> None:
    assert run(argv, capsys) == ("", "", 0)
    assert fake.calls == [("UpdateJob", {"job_id": 3, "requester_uid": os.getuid(), **changes})]


@pytest.mark.parametrize(
    ("limit", "err"),
    [
        (
            "-100",
            "scontrol: error: TimeLimit decrement larger than current time limit (100 > 20)\n",
        ),
        ("+infinite", "scontrol: error: Invalid TimeLimit value\n"),
    ],
)
def test_relative_time_limit_errors(
    fake: Fake, capsys: pytest.CaptureFixture[str], limit: str, err: str
) -> None:
    fake.replies["GetJobs"] = {"jobs": [job(3, "x", "PENDING", time_limit=20).to_dict()]}
    assert run(["update", "JobId=3", f"TimeLimit={limit}"], capsys) == ("", err, 1)
    assert [method for method, _ in fake.calls] == ["GetJobs"]


def test_relative_time_limit_of_an_unknown_job(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.replies["GetJobs"] = RpcError("NOT_FOUND", "Invalid job id specified")
    assert run(["update", "JobId=13", "TimeLimit=+30"], capsys) == (
        "",
        (
            "scontrol: error: Could not load state information for job 13: "
            "Invalid job id specified\n"
        ),
        1,
    )


def test_relative_time_limit_reads_the_current_one(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.replies["GetJobs"] = {"jobs": [job(3, "x", "PENDING", time_limit=20).to_dict()]}
    assert run(["update", "JobId=3", "TimeLimit=-5"], capsys) == ("", "", 0)
    assert fake.calls[-1][1]["time_limit"] == 15


@pytest.mark.parametrize(
    ("argv", "err"),
    [
        (["update", "JobId=3", "TimeLimit=abc"], "scontrol: error: Invalid TimeLimit value\n"),
        (
            ["update", "JobId=3", "Bogus=1"],
            "Update of this parameter is not supported: Bogus=1\nRequest aborted\n",
        ),
        (["update", "JobId=3"], "No changes specified\n"),
        (["update", "JobId=abc", "Name=x"], "Invalid job id specified for job abc\n"),
        (
            ["update", "JobId=3", "Nice=99999999999"],
            "scontrol: error: Nice value out of range (+/- 2147483645). Value ignored\n",
        ),
        (
            ["update", "Name=x"],
            'No valid entity in update command\nInput line must include "NodeName", '
            '"PartitionName", "Reservation", "JobId", or "SlurmctldDebug"\n',
        ),
        (
            ["update", "NodeName=n1", "State=DRAIN"],
            "You must specify a reason when DOWNING or DRAINING a node. Request denied\n",
        ),
        (
            ["update", "NodeName=n1", "State=BOGUS"],
            "Invalid input: State=BOGUS\nRequest aborted\nValid states are: NoResp DRAIN FAIL "
            "FUTURE RESUME POWER_DOWN POWER_UP UNDRAIN\nNot all states are valid given a node's "
            "prior state\n",
        ),
    ],
)
def test_update_rejects_bad_input_without_calling(
    fake: Fake, capsys: pytest.CaptureFixture[str], argv: list[str], err: str
) -> None:
    assert run(argv, capsys) == ("", err, 1)
    assert fake.calls == []


@pytest.mark.parametrize(
    ("argv", "changes"),
    [
        (["update", "job", "3", "TimeLimit=1:30:00"], {"time_limit": 90}),
        (["update", "Job=3", "timelimit=45"], {"time_limit": 45}),
        (["update", "jobid", "3", "TIMELIMIT=55"], {"time_limit": 55}),
        (["update", "JobId=3", "Nice"], {"nice": 100}),
        (["update", "JobId=3", "Nice=abc"], {"nice": 0}),
        (["update", "JobId=3", "NumNodes=1-2"], {"min_nodes": 1, "max_nodes": 2}),
        (["update", "JobId=3", "NumNodes=ALL"], {"min_nodes": 0xFFFFFFFF}),
        (["update", "JobId=3", "Priority=100"], {"priority": 100}),
        (["update", "JobId=3", "Requeue=0"], {"requeue": False}),
        (["update", "JobId=3", "MailType=end,fail"], {"mail_type": "END,FAIL"}),
        (["update", "JobId=3", "Comment=hello world"], {"comment": "hello world"}),
        (["update", "JobId=3", "Gres=gpu:2"], {"gres": "gpu:2"}),
        (["update", "JobId=3", "ArrayTaskThrottle=abc"], {"array_throttle": "0"}),
        (["update", "JobId=3", "De=afterok:2"], {"dependency": "afterok:2"}),
        (["update", "JobId=3", "Dea=now+1hour"], {"deadline": "soon"}),
        (["update", "JobId=3", "Exc=n2", "NodeList=n1"], {"exc_nodes": "n2", "req_nodes": "n1"}),
        (
            ["update", "JobId=3", "Res=maint", "A=acct", "QO=high"],
            {"account": "acct", "qos": "high"},
        ),
    ],
)
def test_update_keys_are_matched_and_read_as_slurms(
    fake: Fake, capsys: pytest.CaptureFixture[str], argv: list[str], changes: dict[str, Any]
) -> None:
    assert run(argv, capsys) == ("", "", 0)
    [(method, sent)] = fake.calls
    assert (method, sent["job_id"]) == ("UpdateJob", 3)
    for key, value in changes.items():
        assert sent[key] == value if value != "soon" else sent[key] > 0, key


@pytest.mark.parametrize(
    ("argv", "err", "status"),
    [
        (["update"], "too few arguments for update keyword\n", 1),
        (["up"], "too few arguments for up keyword\n", 1),
        (["update", "job"], "Invalid input: job\nRequest aborted\n", 1),
        (["update", "JobId=3", "TimeLimit"], "Invalid input: TimeLimit\nRequest aborted\n", 1),
        (
            ["update", "TimeLimit=+5", "JobId=3"],
            "scontrol: error: JobId must precede TimeLimit increment or decrement\n",
            1,
        ),
        (
            ["update", "JobId=3", "Name+=x"],
            "scontrol: error: Option Name does not accept [+|-]= syntax\n",
            1,
        ),
        (["update", "JobId=3", "Priority=-1"], "scontrol: error: Invalid Priority value: -1\n", 1),
        (["update", "JobId=3", "Requeue=x"], "scontrol: error: Invalid Requeue value: x\n", 1),
        (["update", "JobId=3", "MailType=bogus"], "Invalid MailType: bogus\n", 1),
        (
            ["update", "JobId=3", "NumNodes=abc"],
            'scontrol: error: Invalid numeric value "abc" for requested node count.\n',
            0,
        ),
        (
            ["update", "JobId=3", "StartTime=garbage"],
            "Invalid time specification (pos=0): garbage\nNo changes specified\n",
            1,
        ),
        (
            ["update", "JobId=3", "BeginTime=now"],
            "Update of this parameter is not supported: BeginTime=now\nRequest aborted\n",
            1,
        ),
        (
            ["update", "JobId=3,4", "NumNodes=2"],
            "scontrol: error: Invalid job ID 3,4\n",
            1,
        ),
        (["update", "JobId=1-3", "Name=x"], "Invalid job id specified for job 1-3\n", 1),
        (["update", "TimeLimit=5"], scontrol_update.NO_ENTITY + "\n", 1),
    ],
)
def test_update_errors_match_real_scontrol(
    fake: Fake, capsys: pytest.CaptureFixture[str], argv: list[str], err: str, status: int
) -> None:
    assert run(argv, capsys) == ("", err, status)
    assert fake.calls == []


def test_update_by_job_name_changes_every_job_of_that_name(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    jobs = [job(7, "train", "PENDING"), job(5, "train", "PENDING"), job(6, "other", "PENDING")]
    fake.replies["GetJobs"] = {"jobs": [j.to_dict() for j in jobs]}
    assert run(["update", "JobName=train", "TimeLimit=25"], capsys) == ("", "", 0)
    assert [c[1]["job_id"] for c in fake.calls[1:]] == [5, 7]
    assert fake.calls[1][1]["name"] == "train"
    assert run(["update", "JobName=none", "TimeLimit=25"], capsys) == (
        "",
        "scontrol: error: No jobs with name 'none'\n",
        1,
    )


def test_update_entities_are_found_as_slurm_finds_them() -> None:
    assert scontrol_update.entities(["Partition=gpu", "JobId=4"]) == {
        "partition": "gpu",
        "job": "4",
    }
    assert scontrol_update.entities(["job", "4", "TimeLimit=5"]) == {"job": "4"}
    assert scontrol_update.entities(["NodeName=n1", "Reason=x y"]) == {"node": "n1"}
    assert scontrol_update.entities(["Res=maint", "Nodes=n1"]) == {"reservation": "maint"}
    assert scontrol_update.entities(["Name=x"]) == {}


def test_update_job_error_names_the_job(fake: Fake, capsys: pytest.CaptureFixture[str]) -> None:
    fake.replies["UpdateJob"] = RpcError("INVALID_ARGUMENT", "Invalid partition name specified")
    assert run(["update", "JobId=3", "Partition=nosuch"], capsys) == (
        "",
        "Invalid partition name specified for job 3\n",
        1,
    )


def test_update_node_sends_state_and_multiword_reason(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["update", "NodeName=n[1-2]", "State=drain", "Reason=maint work"], capsys) == (
        "",
        "",
        0,
    )
    assert fake.calls == [
        (
            "UpdateNode",
            {
                "names": "n[1-2]",
                "state": "DRAIN",
                "reason": "maint work",
                "requester_uid": os.getuid(),
            },
        )
    ]


def test_update_node_error_is_slurm_update_error(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.replies["UpdateNode"] = RpcError("NOT_FOUND", "Invalid node name specified")
    assert run(["update", "NodeName=nosuch", "State=DRAIN", "Reason=x"], capsys) == (
        "",
        "slurm_update error: Invalid node name specified\n",
        1,
    )


@pytest.mark.parametrize(
    ("text", "value"), [("10", 10), ("-5", -5), ("+3", 3), ("abc", 0), ("7x", 7), ("-", 0)]
)
def test_parse_nice_reads_like_strtol(text: str, value: int) -> None:
    assert scontrol_jobupdate.parse_nice(text) == value


@pytest.mark.parametrize(
    ("word", "keyword", "minimum", "matches"),
    [
        ("sho", "show", 3, True),
        ("sh", "show", 3, False),
        ("SHOW", "show", 3, True),
        ("shows", "show", 3, False),
        ("hostl", "hostlist", 5, True),
        ("hostlists", "hostlist", 5, False),
        ("p", "partitions", 2, False),
    ],
)
def test_keyword_abbreviations_follow_slurms_minimums(
    word: str, keyword: str, minimum: int, matches: bool
) -> None:
    assert scontrol.keyword_matches(word, keyword, minimum) is matches


@pytest.mark.parametrize(
    ("argv", "out", "err"),
    [
        (["delete"], "", "too few arguments for delete keyword\n"),
        (["delete", "bogus=1"], "", "Invalid deletion entity: bogus=1\n"),
        (
            ["delete", "maint"],
            "",
            "scontrol: error: Proper format is 'delete <ENTITY>=<ID>' or 'delete <ENTITY> <ID>'\n",
        ),
        (["create"], "", "too few arguments for create keyword\n"),
        (["create", "bogus"], "", "scontrol: error: Invalid creation entity: bogus\n"),
        (["ping", "extra"], "", "too many arguments for keyword:ping\n"),
        (["version", "x"], VERSION_LINE + "\n", "too many arguments for version keyword\n"),
        (["show", "node", "nosuch"], "Node nosuch not found\n", ""),
    ],
)
def test_scontrol_usage_errors_match_real_scontrol(
    fake: Fake, capsys: pytest.CaptureFixture[str], argv: list[str], out: str, err: str
) -> None:
    fake.replies["GetNodes"] = {"nodes": []}
    assert run(argv, capsys) == (out, err, 1)


def test_delete_names_the_reservation_as_typed(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.replies["ManageReservation"] = RpcError(
        "INVALID_ARGUMENT", "Requested reservation is invalid"
    )
    assert run(["delete", "reservation=nosuch"], capsys) == (
        "",
        "delete_reservation reservation=nosuch: Requested reservation is invalid\n",
        1,
    )
    assert run(["delete", "Res", "nosuch"], capsys)[1].startswith("delete_reservation Res: ")
    assert [c[1]["name"] for c in fake.calls] == ["nosuch", "nosuch"]


def test_show_licenses_says_there_are_none(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["show", "lic"], capsys) == ("No licenses configured in Slurm.\n", "", 0)


def test_without_a_command_scontrol_reads_commands_from_stdin(
    fake: Fake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("show partition nosuch\nversion\n"))
    out, err, status = run([], capsys)
    assert out == (
        "scontrol: show partition nosuch\nPartition nosuch not found\n"
        f"scontrol: version\n{VERSION_LINE}\nscontrol: \n"
    )
    assert (err, status) == ("", 0)
    monkeypatch.setattr("sys.stdin", io.StringIO("bogus\nquit\nversion\n"))
    assert run([], capsys) == ("scontrol: bogus\nscontrol: quit\n", "invalid keyword: bogus\n", 1)


def test_update_of_array_tasks_reports_groups_of_tasks_as_slurm_does(
    fake: Fake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def call(method: str, **request: Any) -> Message:
        fake.calls.append((method, request))
        if request.get("array_task_id", 0) > 3:
            raise RpcError("NOT_FOUND", "Invalid job id specified")
        return Message("minislurm.v1.UpdateJobReply", {})

    monkeypatch.setattr(common, "call", call)
    assert run(["update", "JobId=39_[2-7]", "TimeLimit=5"], capsys) == (
        "",
        "39_2-3: No error\n39_4-7: Invalid job id specified\n",
        1,
    )
    assert [c[1]["array_task_id"] for c in fake.calls] == [2, 3, 4, 5, 6, 7]
    assert run(["update", "JobId=39_1", "TimeLimit=5"], capsys) == ("", "", 0)


def _topology(plugin: str, *units: dict[str, Any]) -> Message:
    return Message(
        "minislurm.v1.GetTopologyReply",
        {"plugin": plugin, "units": [Message("minislurm.v1.TopologyUnit", u) for u in units]},
    )


def test_show_topology_prints_blocks_as_slurm_does(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    reply = _topology(
        "topology/block",
        {"name": "b1", "nodes": "n[1-8]", "size": 8},
        {"name": "b2", "nodes": "n[9-16]", "index": 1, "size": 8},
        {"name": "b[1-2]", "level": 1, "nodes": "n[1-16]", "size": 16},
    )
    monkeypatch.setattr(common, "call", lambda method, **request: reply)
    assert run(["show", "topology"], capsys) == (
        "BlockName=b1 BlockIndex=0 Nodes=n[1-8] BlockSize=8\n"
        "BlockName=b2 BlockIndex=1 Nodes=n[9-16] BlockSize=8\n"
        "AggregatedBlock=b[1-2] BlockIndex=0 Nodes=n[1-16] BlockSize=16\n",
        "",
        0,
    )
    assert run(["show", "topology", "block=b2"], capsys)[0].startswith("BlockName=b2 ")
    assert run(["show", "topo", "n[8-9]"], capsys)[0].startswith("AggregatedBlock=b[1-2] ")


def test_show_topology_without_a_topology(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(common, "call", lambda method, **request: _topology("topology/flat"))
    assert run(["show", "topology"], capsys) == (
        "",
        "scontrol: error: No topology information available\n",
        0,
    )
    assert run(["show", "topology", "n1"], capsys) == (
        "",
        "scontrol: error: Topology information contains no switch or node named n1\n",
        0,
    )
