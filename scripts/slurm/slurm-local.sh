#!/usr/bin/env bash
# slurm-local.sh - throwaway single-node Slurm cluster on localhost, for CI end-to-end tests.
# (Copied from the verified recipe ../shared/notes/slurm-local.sh and slurm-local.md; used by
# scripts/slurm/e2e-test.sh.)
#
# Starts munged + slurmctld + slurmd as root with every file (config, key, state, logs, sockets,
# pid files) inside one private directory, so it does not touch /etc/slurm or /etc/munge and does
# not depend on systemd. Tested with Debian 12 packages (Slurm 22.05.8, MUNGE 0.5.15).
#
# Use as a command:
#   eval "$(sudo bash slurm-local.sh start)"     # prints export lines: SLURM_CONF, SLURM_LOCAL_DIR
#   sbatch --array=1-4 --wait job.sh             # exit status = highest exit status of the tasks
#   sudo bash slurm-local.sh stop "$SLURM_LOCAL_DIR"
#   sudo bash slurm-local.sh selftest            # start, run a 4-task array, check, stop
#
# Or source it and call the functions:
#   source slurm-local.sh; slurm_local_start; ...; slurm_local_stop
#
# Settings (environment, all optional):
#   SLURM_LOCAL_DIR      directory for everything (default: new mktemp -d under /tmp). Every path
#                        component must be world-executable (munged refuses otherwise).
#   SLURM_LOCAL_NODE     node name (default: hostname -s)
#   SLURM_LOCAL_CPUS     CPUs to advertise (default: detected). More than the real count is allowed
#                        (config_overrides), e.g. to run every array task of a test at once.
#   SLURM_LOCAL_CTLD_PORT / SLURM_LOCAL_SLURMD_PORT   TCP ports (default 6817 / 6818)
#   SLURM_LOCAL_TIMEOUT  seconds to wait for the node to become idle (default 60)
#   SLURM_LOCAL_INSTALL  1 (default): apt-get install the packages if a binary is missing; 0: fail
#   SLURM_LOCAL_KEEP     1: slurm_local_stop keeps the directory (logs); default removes it
#
# Requires root (slurmd must be able to start jobs as the submitting user).

_sl_log() { echo "slurm-local: $*" >&2; }

slurm_local_install() {
    local missing=0 b
    for b in munged slurmctld slurmd sbatch sinfo scontrol; do
        command -v "$b" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin" command -v "$b" >/dev/null 2>&1 || missing=1
    done
    [ "$missing" = 0 ] && return 0
    if [ "${SLURM_LOCAL_INSTALL:-1}" != 1 ]; then
        _sl_log "Slurm/MUNGE binaries missing and SLURM_LOCAL_INSTALL=0"; return 1
    fi
    _sl_log "installing munge slurmctld slurmd slurm-client (apt)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || return 1
    # --no-install-recommends: slurm-wlm's recommends pull ~30 -dev packages; not needed.
    # On hosts where policy-rc.d allows it (systemd hosts), postinst starts the stock munge
    # service on /run/munge; harmless, this script uses its own munged on its own socket.
    apt-get install -y -qq --no-install-recommends munge slurmctld slurmd slurm-client >&2 || return 1
}

_sl_alive() {
    local st
    st=$(awk '/^State:/ {print $2}' "/proc/$1/status" 2>/dev/null) || true
    [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# Kill one recorded PID if it is still the expected program. Never by name.
_sl_kill_pid() {
    local pidfile=$1 prog=$2 pid exe _
    [ -f "$pidfile" ] || return 0
    pid=$(cat "$pidfile" 2>/dev/null) || true
    [ -n "$pid" ] || return 0
    exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || { rm -f "$pidfile"; return 0; }
    case "$exe" in
        *"$prog"*) ;;
        *) _sl_log "pid $pid is no longer $prog ($exe); not killing"; rm -f "$pidfile"; return 0 ;;
    esac
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
        # Gone, or a zombie: the daemon is reparented to PID 1, which may reap it only later.
        _sl_alive "$pid" || { rm -f "$pidfile"; return 0; }
        sleep 0.1
    done
    _sl_log "$prog (pid $pid) did not exit after SIGTERM; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$pidfile"
}

# Report a start failure with the daemons' log tails, then stop whatever did start.
_sl_fail() {
    local dir=$1 f
    _sl_log "$2"
    for f in munged slurmctld slurmd; do
        [ -s "$dir/log/$f.log" ] && { echo "--- $f.log" >&2; tail -n 8 "$dir/log/$f.log" >&2; }
    done
    slurm_local_stop "$dir"
}

# Wait until a daemon has written its pid file; copy it (daemons delete theirs on exit).
_sl_wait_pidfile() {
    local src=$1 dst=$2 _
    for _ in $(seq 1 100); do
        if [ -s "$src" ]; then cp "$src" "$dst"; return 0; fi
        sleep 0.1
    done
    return 1
}

slurm_local_start() {
    export PATH="$PATH:/usr/sbin:/sbin"
    if [ "$(id -u)" != 0 ]; then _sl_log "must run as root"; return 1; fi
    slurm_local_install || return 1

    local cport=${SLURM_LOCAL_CTLD_PORT:-6817} dport=${SLURM_LOCAL_SLURMD_PORT:-6818} p
    for p in "$cport" "$dport"; do
        if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            _sl_log "TCP port $p is already in use (set SLURM_LOCAL_CTLD_PORT / SLURM_LOCAL_SLURMD_PORT)"
            return 1
        fi
    done

    local dir=${SLURM_LOCAL_DIR:-}
    if [ -z "$dir" ]; then dir=$(mktemp -d /tmp/slurm-local.XXXXXX) || return 1; fi
    mkdir -p "$dir" || return 1
    dir=$(cd "$dir" && pwd -P)
    if [ -f "$dir/pids/slurmctld.pid" ] && _sl_alive "$(cat "$dir/pids/slurmctld.pid")"; then
        _sl_log "a cluster is already running in $dir (stop it first)"; return 1
    fi
    # munged requires the socket path to be traversable by everyone, key dir private.
    chmod 755 "$dir"
    mkdir -p "$dir"/{etc,munge-key,munge-run,state,spool,log,run,pids}
    chmod 700 "$dir/munge-key"; chmod 755 "$dir/munge-run"

    local node=${SLURM_LOCAL_NODE:-$(hostname -s 2>/dev/null || uname -n)}
    node=${node%%.*}
    local hw cpus mem
    hw=$(slurmd -C 2>/dev/null | grep '^NodeName=' | head -1) || true
    cpus=$(sed -n 's/.* CPUs=\([0-9]*\).*/\1/p' <<<"$hw"); cpus=${cpus:-$(nproc)}
    mem=$(sed -n 's/.* RealMemory=\([0-9]*\).*/\1/p' <<<"$hw"); mem=${mem:-1000}
    cpus=${SLURM_LOCAL_CPUS:-$cpus}

    # MUNGE: private key, socket, pid, log, seed. Runs as root; no --force needed.
    local key="$dir/munge-key/munge.key" sock="$dir/munge-run/munge.socket"
    if command -v mungekey >/dev/null 2>&1; then
        mungekey --create --keyfile="$key" --force 2>/dev/null || dd if=/dev/urandom of="$key" bs=1024 count=1 2>/dev/null
    else
        dd if=/dev/urandom of="$key" bs=1024 count=1 2>/dev/null
    fi
    chmod 600 "$key"

    cat > "$dir/etc/slurm.conf" <<EOF
ClusterName=localci
SlurmctldHost=${node}(127.0.0.1)
SlurmctldPort=${cport}
SlurmdPort=${dport}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=${sock}
StateSaveLocation=${dir}/state
SlurmdSpoolDir=${dir}/spool/slurmd-%n
SlurmctldPidFile=${dir}/run/slurmctld.pid
SlurmdPidFile=${dir}/run/slurmd.pid
SlurmctldLogFile=${dir}/log/slurmctld.log
SlurmdLogFile=${dir}/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups: plain process tracking, no task binding. Accounting, job completion logging,
# MPI and switch plugins are left at their defaults, which are all "none" in 22.05 (explicit
# .../none spellings are omitted because plugin names have changed between releases).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# Scheduling latency: start batch jobs at once instead of after the default 3 s batching delay.
SchedulerParameters=batch_sched_delay=0
# Keep finished jobs visible for 5 s: sbatch --wait then polls every 2 s instead of 2 s, 8 s, 32 s.
MinJobAge=5
ReturnToService=2
# Accept the node definition below even where it differs from the detected hardware.
SlurmdParameters=config_overrides
NodeName=${node} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${mem} State=UNKNOWN
PartitionName=debug Nodes=${node} Default=YES MaxTime=INFINITE State=UP
EOF
    # Clients run by other users (e.g. tests as a non-root user) must be able to read the config.
    chmod 755 "$dir/etc"; chmod 644 "$dir/etc/slurm.conf"
    mkdir -p "$dir/spool/slurmd-${node}"
    # slurmstepd execs the batch script from the spool dir as the submitting user: keep it
    # traversable even under a restrictive umask (else execve fails with EACCES, exit code 13).
    chmod 755 "$dir/spool" "$dir/spool/slurmd-${node}"

    export SLURM_CONF="$dir/etc/slurm.conf" SLURM_LOCAL_DIR="$dir"

    munged --socket="$sock" --key-file="$key" --pid-file="$dir/munge-run/munged.pid" \
        --log-file="$dir/log/munged.log" --seed-file="$dir/munge-key/munged.seed" \
        || { _sl_fail "$dir" "munged failed to start"; return 1; }
    _sl_wait_pidfile "$dir/munge-run/munged.pid" "$dir/pids/munged.pid" || { _sl_fail "$dir" "munged wrote no pid file"; return 1; }

    slurmctld -f "$SLURM_CONF" \
        || { _sl_fail "$dir" "slurmctld failed to start"; return 1; }
    _sl_wait_pidfile "$dir/run/slurmctld.pid" "$dir/pids/slurmctld.pid" || { _sl_fail "$dir" "slurmctld wrote no pid file"; return 1; }

    slurmd -f "$SLURM_CONF" -N "$node" \
        || { _sl_fail "$dir" "slurmd failed to start"; return 1; }
    _sl_wait_pidfile "$dir/run/slurmd.pid" "$dir/pids/slurmd.pid" || { _sl_fail "$dir" "slurmd wrote no pid file"; return 1; }

    local t0=$SECONDS state=""
    while [ $((SECONDS - t0)) -lt "${SLURM_LOCAL_TIMEOUT:-60}" ]; do
        state=$(sinfo -h -n "$node" -o %T 2>/dev/null) || true
        [ "$state" = idle ] && break
        if ! _sl_alive "$(cat "$dir/pids/slurmctld.pid")" || ! _sl_alive "$(cat "$dir/pids/slurmd.pid")"; then
            state="daemon exited"; break
        fi
        sleep 0.5
    done
    if [ "$state" != idle ]; then
        _sl_fail "$dir" "node not idle (state: '${state}', waited $((SECONDS - t0))s)"; return 1
    fi
    _sl_log "cluster up: node ${node} idle, ${cpus} CPUs, dir ${dir}"
}

slurm_local_stop() {
    local dir=${1:-${SLURM_LOCAL_DIR:-}}
    [ -n "$dir" ] && [ -d "$dir" ] || { _sl_log "stop: no SLURM_LOCAL_DIR"; return 1; }
    export PATH="$PATH:/usr/sbin:/sbin"
    local conf="$dir/etc/slurm.conf"
    # Cancel remaining jobs so their slurmstepd processes exit before slurmd goes away.
    if [ -f "$dir/pids/slurmctld.pid" ] && [ -f "$conf" ]; then
        local ids
        ids=$(SLURM_CONF="$conf" timeout 10 squeue -h -o %A 2>/dev/null | tr '\n' ' ') || true
        if [ -n "${ids// /}" ]; then
            # shellcheck disable=SC2086
            SLURM_CONF="$conf" timeout 10 scancel $ids 2>/dev/null || true
            local _
            for _ in $(seq 1 20); do
                [ -z "$(SLURM_CONF="$conf" timeout 5 squeue -h -t R,CG -o %A 2>/dev/null)" ] && break
                sleep 0.5
            done
        fi
    fi
    _sl_kill_pid "$dir/pids/slurmd.pid" slurmd
    _sl_kill_pid "$dir/pids/slurmctld.pid" slurmctld
    _sl_kill_pid "$dir/pids/munged.pid" munged
    if [ "${SLURM_LOCAL_KEEP:-0}" != 1 ]; then
        case "$dir" in /tmp/slurm-local.*) rm -rf "$dir" ;; *) _sl_log "keeping $dir (not created by this script)";; esac
    fi
}

slurm_local_selftest() {
    local t0 t1 t2 work rc n
    t0=$(date +%s.%N)
    slurm_local_start || return 1
    t1=$(date +%s.%N)
    work=$(mktemp -d /tmp/slurm-local-job.XXXXXX); chmod 755 "$work"
    cat > "$work/job.sh" <<'EOF'
#!/bin/bash
#SBATCH --job-name=selftest
#SBATCH --output=slurm-%A_%a.out
#SBATCH --time=1
echo "task=${SLURM_ARRAY_TASK_ID} count=${SLURM_ARRAY_TASK_COUNT} job=${SLURM_ARRAY_JOB_ID}" \
    > "task-${SLURM_ARRAY_TASK_ID}.txt"
EOF
    rc=0; (cd "$work" && timeout 120 sbatch --array=1-4 --wait job.sh) || rc=$?
    t2=$(date +%s.%N)
    n=$(grep -l '^task=[1-4] count=4 job=[0-9]' "$work"/task-*.txt 2>/dev/null | wc -l) || true
    cat "$work"/task-*.txt >&2 || true
    slurm_local_stop
    rm -rf "$work"
    awk -v rc="$rc" -v n="$n" -v a="$t0" -v b="$t1" -v c="$t2" -v d="$(date +%s.%N)" 'BEGIN {
        printf "slurm-local selftest: sbatch rc=%s, %s/4 task files ok, start %.1fs, array %.1fs, total %.1fs\n",
            rc, n, b - a, c - b, d - a }' >&2
    [ "$rc" = 0 ] && [ "$n" = 4 ]
}

# Command-line entry point (skipped when sourced).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    case "${1:-}" in
        start)
            slurm_local_start >&2 || exit 1
            printf 'export SLURM_CONF=%q\nexport SLURM_LOCAL_DIR=%q\n' "$SLURM_CONF" "$SLURM_LOCAL_DIR"
            ;;
        stop) slurm_local_stop "${2:-}" ;;
        selftest) slurm_local_selftest ;;
        install) slurm_local_install ;;
        *) echo "usage: $0 start | stop DIR | selftest | install" >&2; exit 2 ;;
    esac
fi
