# Helpers for the cases' setup and run text, sourced by bash on both systems.
# They use only what both systems have (squeue -t all, files in the working
# directory). A wait that does not come true exits 222: the harness reports a
# broken setup rather than a result.

: "${CONFORMANCE_WAIT:=20}"  # seconds a wait may take

conformance_fail() {
    echo "conformance: $*" >&2
    exit 222
}

# wait_state JOB STATE...: until squeue -t all shows JOB (an id, or ARRAY_TASK) in one of STATEs.
wait_state() {
    local job=$1 state deadline=$((SECONDS + CONFORMANCE_WAIT))
    shift
    while :; do
        state=$(squeue -h -t all -j "$job" -o %T 2>/dev/null | head -n 1)
        [ -n "$state" ] && [[ " $* " == *" $state "* ]] && return 0
        ((SECONDS < deadline)) || conformance_fail "job $job is '$state', not $*"
        sleep 0.1
    done
}

# wait_reason JOB REASON: until the pending JOB's reason is REASON.
wait_reason() {
    local reason deadline=$((SECONDS + CONFORMANCE_WAIT))
    while :; do
        reason=$(squeue -h -j "$1" -o %r 2>/dev/null | head -n 1)
        [ "$reason" = "$2" ] && return 0
        ((SECONDS < deadline)) || conformance_fail "job $1 has reason '$reason', not $2"
        sleep 0.1
    done
}

# wait_file PATH [TEXT]: until PATH exists (a task touches it when it has started), and holds
# TEXT if given (a file being written may be seen empty).
wait_file() {
    local deadline=$((SECONDS + CONFORMANCE_WAIT))
    until [ -e "$1" ] && { [ -z "${2-}" ] || grep -qF -- "$2" "$1"; }; do
        ((SECONDS < deadline)) || conformance_fail "$1 did not appear${2+ with $2}"
        sleep 0.1
    done
}

# running [SBATCH OPTION...]: submit a job that sleeps, wait until it runs, print its id.
running() {
    local job
    job=$(sbatch --parsable -o /dev/null "$@" --wrap='sleep 300') || conformance_fail "sbatch $*"
    wait_state "$job" RUNNING
    echo "$job"
}

# held [SBATCH OPTION...]: submit a held job, print its id.
held() {
    sbatch --parsable --hold "$@" --wrap=true || conformance_fail "sbatch --hold $*"
}

# finished [SBATCH OPTION...] -- SCRIPT: run SCRIPT as a job, wait until it ends, print its id.
finished() {
    local job opts=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    job=$(sbatch --parsable "${opts[@]}" --wrap="$*") || conformance_fail "sbatch ${opts[*]}"
    wait_state "$job" COMPLETED FAILED CANCELLED TIMEOUT OUT_OF_MEMORY
    echo "$job"
}

# wait_acct JOB[.STEP] STATE: until sacct shows that record in a state that starts with STATE
# ("CANCELLED" matches "CANCELLED by 0"), under its own name (accounting lags the controller:
# slurmdbd may first hold a record named "allocation").
wait_acct() {
    local record deadline=$((SECONDS + CONFORMANCE_WAIT))
    while :; do
        record=$(sacct -n -P -j "${1%%.*}" -o JobID,State,JobName 2>/dev/null | grep "^$1|")
        [[ $record == "$1|$2"* && $record != *"|allocation" ]] && return 0
        ((SECONDS < deadline)) || conformance_fail "sacct shows '$record', not $1 $2"
        sleep 0.1
    done
}
