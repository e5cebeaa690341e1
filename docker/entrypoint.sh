#!/bin/sh
# Entry point of every container of the compose cluster: on slurmctld's first
# start, make the cluster key in the volume every container shares; then run the
# container's command.
set -e
KEY=/var/lib/minislurm/key/slurm.key
if [ "$1" = slurmctld ] && [ ! -e "$KEY" ]; then
    minislurm keygen "$KEY"
fi
exec "$@"
