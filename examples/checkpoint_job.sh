#!/bin/bash
# A training run that may be requeued (node failure, scontrol requeue) and resumes
# from its latest checkpoint. Usage: sbatch examples/checkpoint_job.sh [CKPT_DIR] [STEPS]
#SBATCH --job-name=ckpt-train
#SBATCH --requeue
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --time=30
#SBATCH --output=%x-%j.out
#SBATCH --open-mode=append

echo "job=$SLURM_JOB_ID node=$SLURMD_NODENAME restart_count=${SLURM_RESTART_COUNT:-0}"
exec python "${TRAIN_SCRIPT:-examples/checkpoint_train.py}" \
    --dir "${1:-ckpt-$SLURM_JOB_ID}" --steps "${2:-60}" --every 5 --step-seconds "${STEP_SECONDS:-0.2}"
