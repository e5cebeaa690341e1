"""Node names resolve inside every job of a plain local cluster, and nowhere else.

Every node of the local cluster is ``NodeAddr=127.0.0.1``, a name this host
does not know; each job sees a hosts file naming them (nodeagent.hostsfile),
so that training scripts can take their rendezvous host from the node list.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import TestCluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

ALLREDUCE = Path(__file__).resolve().parents[2] / "examples" / "ddp_allreduce.py"

# Rank 0 listens on the first node's name; every other rank connects to it there.
RENDEZVOUS = """\
import os, socket, subprocess, time
host = subprocess.run(
    ["scontrol", "show", "hostnames", os.environ["SLURM_JOB_NODELIST"]],
    capture_output=True, text=True, check=True,
).stdout.split()[0]
port = int(os.environ["MASTER_PORT"])
if os.environ["SLURM_PROCID"] == "0":
    server = socket.create_server((host, port))
    peer, _ = server.accept()
    print("rank 0 on", os.environ["SLURMD_NODENAME"], "got", peer.recv(64).decode(), flush=True)
else:
    deadline = time.monotonic() + 60
    while True:
        try:
            conn = socket.create_connection((host, port))
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    conn.sendall(("hello from " + os.environ["SLURMD_NODENAME"]).encode())
"""


def test_node_names_resolve_in_batch_scripts_and_in_tasks_on_every_node(
    cluster: TestCluster,
) -> None:
    hosts_before = Path("/etc/hosts").read_bytes()
    script = "#!/bin/bash\ngetent hosts n1 n2\nsrun -N2 -n2 -l getent hosts n1 n2 | sort\n"
    job_id = cluster.sbatch("-N2", "-n2", script=script)
    info = cluster.wait_state(job_id, timeout=60)
    out = (cluster.workdir / f"slurm-{job_id}.out").read_text()
    assert info["JobState"] == "COMPLETED", out
    lines = [line.split() for line in out.splitlines()]
    assert lines[:2] == [["127.0.0.1", "n1"], ["127.0.0.1", "n2"]]
    assert sorted(lines[2:]) == [
        ["0:", "127.0.0.1", "n1"],
        ["0:", "127.0.0.1", "n2"],
        ["1:", "127.0.0.1", "n1"],
        ["1:", "127.0.0.1", "n2"],
    ]
    # The jobs' mounts never reach the host: its /etc/hosts reads as before.
    assert Path("/etc/hosts").read_bytes() == hosts_before


def test_a_socket_bound_on_the_first_nodes_name_is_reached_from_the_other_node(
    cluster: TestCluster,
) -> None:
    (cluster.workdir / "rendezvous.py").write_text(RENDEZVOUS)
    script = "#!/bin/bash\nsrun python rendezvous.py\n"
    job_id = cluster.sbatch("-N2", "--ntasks-per-node=1", script=script)
    info = cluster.wait_state(job_id, timeout=90)
    out = (cluster.workdir / f"slurm-{job_id}.out").read_text()
    assert info["JobState"] == "COMPLETED", out
    assert out.splitlines() == ["rank 0 on n1 got hello from n2"]


def test_gloo_allreduce_meets_at_the_first_hostname_of_the_node_list(
    cluster: TestCluster,
) -> None:
    pytest.importorskip("torch")
    script = f"""#!/bin/bash
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
echo "master=$MASTER_ADDR:$MASTER_PORT"
srun python {ALLREDUCE}
"""
    job_id = cluster.sbatch("-N2", "--ntasks-per-node=1", "-o", "gloo-%j.out", script=script)
    info = cluster.wait_state(job_id, timeout=240)
    out = (cluster.workdir / f"gloo-{job_id}.out").read_text()
    assert info["JobState"] == "COMPLETED", out
    assert f"master=n1:{15000 + int(str(job_id)[-4:])}" in out.splitlines()
    ranks = sorted(line for line in out.splitlines() if line.startswith("rank="))
    assert len(ranks) == 2 and all(" world=2 " in r and r.endswith(" sum=1") for r in ranks)
    assert [r.split(" node=")[1].split()[0] for r in ranks] == ["n1", "n2"]
