#!/bin/bash
# A job that fails, to show how Slurm reports exit codes.
#SBATCH --job-name=fails
#SBATCH --output=%x-%j.out
echo "about to fail"
exit 3
