"""Tests of the simulator's node level: GPU jobs on GPU nodes, and how jobs lie on the leaves.

Imports ctld.simtopo, ctld.simulator, ctld.sched and minislurm (the ``minislurm simulate``
command).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from plan_checks import check_plan

from cli.manage import main
from ctld.sched.knobs import BUILTIN, SchedConfig
from ctld.sched.plan import plan
from ctld.simtopo import gpu_job, gpu_machine, gpu_setup, placement_measures, with_switches
from ctld.simulator import JobRecord, SimJob, simulate, summarize
from minislurm.model import Plan, Snapshot
from minislurm.topology import BLOCK, TREE, Block, Switch, Topology, load_topology


def trace_file(tmp_path: Path, lines: list[str], procs: int) -> Path:
    """An SWF file of ``procs`` processors; each line: submit, run time, processors."""
    rows = []
    for number, line in enumerate(lines, 1):
        submit, run, width = line.split()
        rows.append(f"{number} {submit} -1 {run} {width} -1 -1 {width} {run} -1 1 1 1 1 1 1 -1 -1")
    path = tmp_path / "t.swf"
    path.write_text(f"; MaxProcs: {procs}\n" + "\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize(
    ("procs", "nodes", "exclusive"), [(1, 1, False), (3, 1, False), (8, 1, False), (9, 2, True)]
)
def test_a_job_no_wider_than_a_node_shares_one_and_a_wider_one_takes_whole_nodes(
    procs: int, nodes: int, exclusive: bool
) -> None:
    req = gpu_job(1, 0.0, procs, 600.0, 8).request
    assert (req.min_nodes, req.max_nodes, req.exclusive) == (nodes, nodes, exclusive)
    assert req.ntasks == req.min_gpus == procs
    assert req.gpus_per_task == 1


def test_jobs_share_a_node_by_gpus_and_a_wide_one_holds_whole_nodes() -> None:
    nodes, part = gpu_machine(2, 8)
    assert [(n.name, n.cpus, n.gpus) for n in nodes] == [
        ("n1", 8, tuple(range(8))),
        ("n2", 8, tuple(range(8))),
    ]
    jobs = [
        SimJob(gpu_job(1, 0, 3, 600, 8), 100),
        SimJob(gpu_job(2, 0, 5, 600, 8), 100),
        SimJob(gpu_job(3, 0, 9, 600, 8), 100),  # two whole nodes: waits for both
    ]

    def on_pass(snapshot: Snapshot, decided: Plan, now: float) -> None:
        check_plan(snapshot, decided, now)
        assert decided == plan(snapshot, now, BUILTIN)

    outcome = simulate(jobs, nodes, (part,), BUILTIN, on_pass)
    runs = {r.job_id: (r.start, r.nodes, r.cpus) for r in outcome.records}
    assert runs == {1: (0, ("n1",), 3), 2: (0, ("n1",), 5), 3: (100, ("n1", "n2"), 16)}
    # Utilization counts the GPUs jobs hold: job 3 holds 16 for its 9.
    assert summarize(outcome)["utilization"] == (8 * 100 + 16 * 100) / (16 * 200)


def test_the_machine_is_the_traces_processors_over_the_node_size_unless_given(
    tmp_path: Path,
) -> None:
    path = trace_file(tmp_path, ["0 10 20", "1 10 17", "2 10 4"], procs=20)
    setup = gpu_setup(str(path), 8)
    assert len(setup.nodes) == 3 and setup.size == 24 and setup.skipped == 0
    small = gpu_setup(str(path), 8, nodes=2)
    # 20 and 17 GPUs need three nodes of 8: left out.
    assert len(small.nodes) == 2 and small.skipped == 2
    assert [j.job.request.min_nodes for j in small.jobs] == [1]


# Leaf a: n1-n4; leaf b: n5, n6; n7 under no switch.
LEAF_A = Switch("a", 0, ("n1", "n2", "n3", "n4"))
LEAF_B = Switch("b", 0, ("n5", "n6"))
TOP = Switch("top", 1, (*LEAF_A.nodes, *LEAF_B.nodes), ("a", "b"))
TREE_TOPOLOGY = Topology(TREE, switches=(LEAF_A, LEAF_B, TOP))


def record(job_id: int, *nodes: str) -> JobRecord:
    return JobRecord(job_id, 0.0, 0.0, 10.0, 8 * len(nodes), nodes)


def test_placement_measures_count_the_leaves_of_multi_node_jobs() -> None:
    records = [
        record(1, "n1"),  # one node: not counted
        record(2, "n1", "n2"),  # fits a leaf (4 nodes at most), in one
        record(3, "n4", "n5"),  # fits, two leaves
        record(4, "n5", "n6", "n7"),  # fits, leaf b and n7 (a leaf of its own)
        record(5, "n1", "n2", "n3", "n4", "n5"),  # wider than any leaf: two leaves
    ]
    got = placement_measures(records, TREE_TOPOLOGY)
    assert got == {
        "single_domain_share": 1 / 3,
        "mean_leaves_per_job": (1 + 2 + 2 + 2) / 4,
        "multi_node_jobs": 4,
        "single_domain_fits": 3,
    }
    blocks = Topology(BLOCK, blocks=(Block("b1", LEAF_A.nodes), Block("b2", LEAF_B.nodes)))
    assert placement_measures(records, blocks) == got
    # Without multi-node jobs nothing missed its leaf.
    assert placement_measures(records[:1], TREE_TOPOLOGY)["single_domain_share"] == 1.0
    assert placement_measures(records[:1], TREE_TOPOLOGY)["mean_leaves_per_job"] == 0.0


# Four nodes of 2 GPUs under two leaves. Job 1 (one node) takes n1; job 2 (two nodes) takes
# n2 and n3 flat, across the leaves, but leaf2 under the tree; job 3 (the four nodes, wider
# than a leaf) waits for both to end and spans the two leaves either way.
SMALL = ["0 100 2", "1 100 4", "2 100 8"]
TOPOLOGY_CONF = """\
SwitchName=leaf1 Nodes=n[1-2]
SwitchName=leaf2 Nodes=n[3-4]
SwitchName=spine Switches=leaf[1-2]
"""


def simulate_small(tmp_path: Path, *extra: str) -> tuple[int, str]:
    trace = trace_file(tmp_path, SMALL, procs=8)
    topology = tmp_path / "topology.conf"
    topology.write_text(TOPOLOGY_CONF)
    args = ["simulate", "--trace", str(trace), "--nodes-of", "2", "--topology", str(topology)]
    result = CliRunner().invoke(main, [*args, *extra])
    return result.exit_code, result.output


def test_the_topology_run_keeps_a_job_in_one_leaf_that_the_flat_run_spreads(
    tmp_path: Path,
) -> None:
    code, output = simulate_small(tmp_path, "--json")
    assert code == 0, output
    report = json.loads(output)
    assert list(report) == [
        "topology",
        "flat",
        "skipped",
        "processors",
        "nodes",
        "gpus_per_node",
        "leaves",
        "leaf_nodes",
    ]
    assert (report["nodes"], report["gpus_per_node"], report["leaves"]) == (4, 2, 2)
    topo, flat = report["topology"], report["flat"]
    assert list(topo)[:4] == [
        "utilization",
        "mean_bsld",
        "single_domain_share",
        "mean_leaves_per_job",
    ]
    assert (topo["single_domain_share"], topo["mean_leaves_per_job"]) == (1.0, 1.5)
    assert (flat["single_domain_share"], flat["mean_leaves_per_job"]) == (0.0, 2.0)
    for run in (topo, flat):
        assert (run["multi_node_jobs"], run["single_domain_fits"]) == (2, 1)
        # 2 + 4 + 8 GPUs for 100 s each; job 3 starts when job 2 ends, at 101.
        assert run["utilization"] == (2 + 4 + 8) * 100 / (8 * 201)


def test_the_table_sets_the_runs_side_by_side(tmp_path: Path) -> None:
    code, output = simulate_small(tmp_path, "--out", str(tmp_path / "out"))
    assert code == 0, output
    assert "(4 nodes of 2 GPUs; 0 records skipped)" in output
    assert "2 leaf switches, the largest of 2 nodes" in output
    rows = {line[:36].strip(): line[36:].split() for line in output.splitlines()}
    assert rows["fitting multi-node jobs in one leaf"] == ["100.0%", "0.0%"]
    assert rows["leaves per multi-node job, mean"] == ["1.50", "2.00"]
    assert rows["utilization"] == ["0.871", "0.871"]
    assert (tmp_path / "out" / "topology" / "jobs.csv").exists()
    assert (tmp_path / "out" / "flat" / "jobs.csv").exists()


def test_a_block_file_places_and_counts_by_base_blocks(tmp_path: Path) -> None:
    trace = trace_file(tmp_path, SMALL, procs=8)
    blocks = tmp_path / "topology.conf"
    blocks.write_text("BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[3-4]\n")
    args = ["simulate", "--trace", str(trace), "--nodes-of", "2", "--topology", str(blocks)]
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    # Job 2 goes into b2 (b1 has one node free): one block, where the flat run spans two.
    assert report["topology"]["single_domain_share"] == 1.0
    assert report["flat"]["single_domain_share"] == 0.0
    text = CliRunner().invoke(main, args).output
    assert "2 base blocks, the largest of 2 nodes" in text
    assert "fitting multi-node jobs in one block" in text


def test_a_topology_naming_nodes_the_machine_lacks_is_refused(tmp_path: Path) -> None:
    trace = trace_file(tmp_path, SMALL, procs=8)
    topology = tmp_path / "topology.conf"
    topology.write_text("SwitchName=s1 Nodes=n[1-8]\n")
    args = ["simulate", "--trace", str(trace), "--nodes-of", "2", "--topology", str(topology)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert "n[5-8] not in slurm.conf (simulated: n[1-4])" in result.output
    missing = CliRunner().invoke(main, [*args[:-1], str(tmp_path / "none.conf")])
    assert missing.exit_code == 1 and "No such file" in missing.output


def test_a_topology_over_one_cpu_nodes(tmp_path: Path) -> None:
    """Without --nodes-of each processor is a node, and the switches group those."""
    trace = trace_file(tmp_path, ["0 100 1", "1 100 2", "2 100 4"], procs=4)
    topology = tmp_path / "topology.conf"
    topology.write_text(TOPOLOGY_CONF)
    args = ["simulate", "--trace", str(trace), "--topology", str(topology), "--json"]
    report = json.loads(CliRunner().invoke(main, args).stdout)
    assert report["processors"] == 4 and "nodes" not in report
    assert report["topology"]["single_domain_share"] == 1.0
    assert report["flat"]["single_domain_share"] == 0.0


def test_without_a_topology_the_node_mode_reports_one_run(tmp_path: Path) -> None:
    trace = trace_file(tmp_path, SMALL, procs=8)
    args = ["simulate", "--trace", str(trace), "--nodes-of", "2"]
    report = json.loads(CliRunner().invoke(main, [*args, "--json"]).stdout)
    assert report["jobs"] == 3 and report["nodes"] == 4 and report["gpus_per_node"] == 2
    assert "topology" not in report
    text = CliRunner().invoke(main, args).output
    assert "(4 nodes of 2 GPUs)" in text


def test_jobs_that_fit_a_leaf_are_given_a_switch_count() -> None:
    jobs = [SimJob(gpu_job(i, 0, procs, 600, 8), 100) for i, procs in enumerate([8, 9, 64, 65])]
    asked = [
        (j.job.request.switches, j.job.request.switch_wait) for j in with_switches(jobs, 8, 600)
    ]
    # One node: nothing to ask; 2 and 8 nodes fit a leaf of 8; 9 nodes do not.
    assert asked == [(0, 0), (1, 600), (1, 600), (0, 0)]


# Two leaves of three nodes of 2 GPUs. Jobs 1 and 2 (two nodes each, 1000 s) take two nodes
# of each leaf, so job 3 (two nodes) finds one free node in each: with --switches=1@100 it
# waits for one leaf until its wait ends, and then starts across the two at once.
THREE = "SwitchName=a Nodes=n[1-3]\nSwitchName=b Nodes=n[4-6]\nSwitchName=top Switches=a,b\n"


def test_a_job_waiting_for_one_leaf_starts_anywhere_when_its_wait_ends(tmp_path: Path) -> None:
    nodes, part = gpu_machine(6, 2)
    conf = tmp_path / "topology.conf"
    conf.write_text(THREE)
    topology = load_topology(str(conf), TREE, (), [n.name for n in nodes])
    cfg = SchedConfig(topology=topology)
    jobs = [SimJob(gpu_job(i, 0, 4, 6000, 2), 1000) for i in (1, 2)]
    third = gpu_job(3, 10, 4, 6000, 2)

    def on_pass(snapshot: Snapshot, decided: Plan, now: float) -> None:
        check_plan(snapshot, decided, now)

    for wait, start in ((0, 10), (100, 110)):
        asked = replace(third, request=replace(third.request, switches=1, switch_wait=wait))
        outcome = simulate([*jobs, SimJob(asked, 1000)], nodes, (part,), cfg, on_pass)
        runs = {r.job_id: (r.start, r.nodes) for r in outcome.records}
        assert runs[1] == (0, ("n1", "n2")) and runs[2] == (0, ("n4", "n5"))
        assert runs[3] == (start, ("n3", "n6"))


def test_switch_wait_asks_one_leaf_capped_by_max_switch_wait(tmp_path: Path) -> None:
    code, output = simulate_small(tmp_path, "--switch-wait", "1000", "--json")
    assert code == 0, output
    assert json.loads(output)["switch_wait"] == 1000  # max_switch_wait raised to it
    params = ["--sched-params", "bf_resolution=1,max_switch_wait=60"]
    code, output = simulate_small(tmp_path, "--switch-wait", "1000", *params, "--json")
    assert json.loads(output)["switch_wait"] == 60  # capped, as a submitted job's
    code, output = simulate_small(tmp_path, "--switch-wait", "1000")
    assert "switches       multi-node jobs of up to 2 nodes ask --switches=1@1000s" in output
    code, output = simulate_small(tmp_path, "--switch-wait", "0", "--json")
    assert "switch_wait" not in json.loads(output)


def test_switch_wait_needs_switches(tmp_path: Path) -> None:
    trace = trace_file(tmp_path, SMALL, procs=8)
    args = ["simulate", "--trace", str(trace), "--nodes-of", "2", "--switch-wait", "60"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1 and "--switch-wait needs --topology" in result.output
    blocks = tmp_path / "topology.conf"
    blocks.write_text("BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[3-4]\n")
    result = CliRunner().invoke(main, [*args, "--topology", str(blocks)])
    assert result.exit_code == 1 and "--switch-wait needs --topology" in result.output
