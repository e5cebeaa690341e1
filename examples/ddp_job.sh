#!/bin/bash
# Data-parallel training across two whole 8-GPU nodes, one rank per GPU: 16 ranks.
#SBATCH --job-name=ddp
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8
#SBATCH --gres=gpu:8
#SBATCH --gpus-per-task=1
#SBATCH --time=10
#SBATCH --output=%x-%j.out

# The script to run is the first argument (default: relative to where sbatch ran).
srun python "${1:-examples/ddp_allreduce.py}"
