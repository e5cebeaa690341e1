"""All-reduce every rank's number with torch.distributed, launched by srun or torchrun.

Each rank prints what it saw; the sum must be world_size * (world_size - 1) / 2:

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
    """Join the process group, all-reduce the rank, report."""
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    total = torch.tensor([float(rank)])
    dist.all_reduce(total)
    line = (
        f"rank={rank} world={world} local_rank={os.environ['LOCAL_RANK']}"
        f" node={os.environ.get('SLURMD_NODENAME', socket.gethostname())}"
        f" cvd={os.environ.get('CUDA_VISIBLE_DEVICES', '')} sum={int(total.item())}\n"
    )
    # One write per line: under torchrun, several ranks share one stdout.
    os.write(1, line.encode())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
