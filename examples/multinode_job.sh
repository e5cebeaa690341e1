#!/bin/bash
# A two-node job with four tasks per node and four GPUs on each node.
#SBATCH --job-name=two-nodes
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --gres=gpu:4
#SBATCH --time=5
#SBATCH --output=%x-%j.out

echo "job $SLURM_JOB_ID: nodes=$SLURM_JOB_NODELIST tasks/node=$SLURM_TASKS_PER_NODE"
echo "batch host $SLURMD_NODENAME sees CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
sleep "${1:-3}"
