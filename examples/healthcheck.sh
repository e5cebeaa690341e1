#!/bin/sh
# HealthCheckProgram: drain this node when its GPUs are not all there, as NHC or a
# DCGM check does on a Slurm site.
#
#   minislurm cluster up --conf HealthCheckProgram="$PWD/examples/healthcheck.sh" \
#       --conf HealthCheckInterval=60
#
# slurmd runs it as its own user (root on a real node) at its start, before the node
# registers, then every HealthCheckInterval seconds, with SLURMD_NODENAME naming the
# node it checks (one slurmd may serve several). A sick node is drained from here,
# with the reason `sinfo -R` shows; the scheduler then gives it no more work.
#
# Real GPUs: nvidia-smi must list as many as the node's Gres=gpu:N and report no
# volatile uncorrectable ECC error. Fake GPUs (a local cluster) have nothing to ask:
# a file gpu-faults/<node> beside slurm.conf plays a fault, its text the reason.
PATH=$PATH:/usr/local/bin:/usr/bin:/bin
node=$SLURMD_NODENAME
drain() {
    scontrol update nodename="$node" state=drain reason="$1"
    exit 1
}
want=$(scontrol show node "$node" | sed -n 's/.*Gres=gpu:\([^ ]*:\)\{0,1\}\([0-9][0-9]*\).*/\2/p')
if command -v nvidia-smi >/dev/null 2>&1; then
    have=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
    [ "$have" -ge "${want:-0}" ] || drain "gpu count $have < ${want:-0}"
    ecc=$(nvidia-smi --query-gpu=ecc.errors.uncorrected.volatile.total \
        --format=csv,noheader,nounits 2>/dev/null | grep -c '^[1-9]')
    [ "$ecc" -eq 0 ] || drain "uncorrectable ECC errors on $ecc gpu(s)"
else
    fault="$(dirname "${SLURM_CONF:-/etc/slurm/slurm.conf}")/gpu-faults/$node"
    [ -e "$fault" ] && drain "$(cat "$fault")"
fi
exit 0
