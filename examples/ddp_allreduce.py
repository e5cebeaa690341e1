"""All-reduce every rank's number with torch.distributed, launched by srun or torchrun.

Each rank prints what it saw, and rank 0 the sum, which must be
world_size * (world_size - 1) / 2 (any rank exits 1 when it is not):

    srun python examples/ddp_allreduce.py
    srun -n $SLURM_NNODES --ntasks-per-node=1 torchrun --nnodes=$SLURM_NNODES --nproc-per-node=4 \\
        --rdzv-backend=c10d --rdzv-endpoint=$MASTER_ADDR:$MASTER_PORT examples/ddp_allreduce.py
"""

from __future__ import annotations

import os
import socket

import torch
import torch.distributed as dist


def main() -> None:
    """Join the process group, all-reduce the rank, report.

    Raises:
        SystemExit: the sum is wrong.
    """
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    total = torch.tensor([float(rank)])
    dist.all_reduce(total)
    line = (
        f"rank={rank} world={world} local_rank={os.environ['LOCAL_RANK']}"
        f" node={os.environ.get('SLURMD_NODENAME', socket.gethostname())}"
        f" cvd={os.environ.get('CUDA_VISIBLE_DEVICES', '')} sum={int(total.item())}\n"
    )
    expected = float(world * (world - 1) // 2)
    if rank == 0:
        line += f"all-reduce over {world} ranks: {total.item()} (expected {expected})\n"
    # One write per rank: under torchrun, several ranks share one stdout.
    os.write(1, line.encode())
    dist.destroy_process_group()
    if total.item() != expected:
        raise SystemExit(f"rank {rank}: all-reduce gave {total.item()}, not {expected}")


if __name__ == "__main__":
    main()
