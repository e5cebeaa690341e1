#!/bin/bash
# A job that takes half of a node's GPUs and shows which ones it got.
#SBATCH --job-name=half-node
#SBATCH --gres=gpu:4
#SBATCH --cpus-per-task=2
#SBATCH --time=5
#SBATCH --output=%x-%j.out

echo "job $SLURM_JOB_ID on $SLURMD_NODENAME: CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
echo "cpus on node: $SLURM_CPUS_ON_NODE, gpus on node: $SLURM_GPUS_ON_NODE"
sleep "${1:-5}"
echo "done"
