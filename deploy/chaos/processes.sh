# The chaos run's processes (sourced by deploy/chaos/run, whose settings they use): waiting
# for, stopping and killing them, starting the proxies and Parley's processes, asking their
# readiness, restarting what exited unbidden (deploy/cluster/run uses the first and the last,
# and replaces the rest).
# shellcheck shell=bash

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null && ! grep -qs '^State:[[:space:]]*Z' "/proc/$1/status"; }

# SIGTERM, then SIGKILL after GRACE seconds; reaps it when it is this shell's child.
stop_pid() {
    local pid=$1 grace=${2:-10}
    alive "$pid" || { wait "$pid" 2>/dev/null || true; return 0; }
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq $((grace * 10))); do alive "$pid" || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

# The same for a process group (a process started with setsid, and its children).
stop_group() {
    local pid=$1 grace=${2:-10}
    kill -TERM -- "-$pid" 2>/dev/null || true
    for _ in $(seq $((grace * 10))); do alive "$pid" || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

# SIGTERM to all at once, SIGKILL to those still running after GRACE seconds.
# shellcheck disable=SC2317  # run by cleanup
stop_pids() {
    local grace=$1 pid stopping=()
    shift
    for pid; do alive "$pid" && kill -TERM "$pid" 2>/dev/null && stopping+=("$pid"); done
    for _ in $(seq $((grace * 10))); do
        local running=0
        for pid in "${stopping[@]}"; do alive "$pid" && running=1; done
        [ "$running" = 1 ] || break
        sleep 0.1
    done
    for pid in "${stopping[@]}"; do kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
}

# A process of this script that exited although nobody killed it: recorded (a failure) and
# started again by restart_process NAME (each run's own), so that the run goes on.
restart_unbidden_exits() {
    local name code
    for name in "${!pid_of[@]}"; do
        alive "${pid_of[$name]}" && continue
        wait "${pid_of[$name]}" 2>/dev/null && code=0 || code=$?
        say "UNEXPECTED: $name (pid ${pid_of[$name]}) exited with status $code during $current_fault; starting it again"
        record "{\"process\": \"$name\", \"pid\": ${pid_of[$name]}, \"status\": $code, \"t\": $(now_ms), \"during\": \"$current_fault\"}" \
            "$out/incidents.jsonl"
        restart_process "$name"
    done
}

start_proxy() {
    local name=$1 listen=$2 target=$3
    rm -f "$work/$name.sock"
    python3 "$chaos/proxy.py" serve --name "$name" --listen "$listen" --target "$target" \
        --mode "$partition_mode" --control "$work/$name.sock" >> "$data/logs/$name.log" 2>&1 &
    track "$name" $!
    # Its control socket comes after its signal handlers: a SIGUSR1 before them would kill it.
    for _ in $(seq 100); do [ -S "$work/$name.sock" ] && return 0; alive "${pid_of[$name]}" || break; sleep 0.05; done
    die "the proxy $name did not start; see $data/logs/$name.log"
}

# Parley's processes reach PostgreSQL and Redis through the proxies (the environment wins over
# PARLEY_CONFIG_FILE); each worker has its own internal port for health and metrics.
start_parley() {
    local name=$1 pid
    local env=(PARLEY_POSTGRES_PORT="$pg_proxy_port" PARLEY_REDIS_PORT="$redis_proxy_port")
    case $name in
        serve) env "${env[@]}" "$bin" serve >> "$data/logs/serve.log" 2>&1 & pid=$! ;;
        worker-*)
            env "${env[@]}" PARLEY_WORKER_INTERNAL_PORT="${worker_port[${name#worker-}]}" \
                "$bin" worker --roles "${name#worker-}" >> "$data/logs/$name.log" 2>&1 &
            pid=$!
            ;;
    esac
    track "$name" "$pid"
    # deploy/local/run stop stops what serve.pid names, should this script be killed outright.
    echo "$pid" > "$data/run/$name.pid"
}

ready_url() {
    case $1 in
        serve) echo "http://127.0.0.1:$PARLEY_LOCAL_INTERNAL_PORT/health/ready" ;;
        worker-*) echo "http://127.0.0.1:${worker_port[${1#worker-}]}/health/ready" ;;
    esac
}
http_status() { curl -s -o /dev/null -w '%{http_code}' --max-time 3 "$1" 2>/dev/null || true; }
all_ready() {
    local name
    for name in "${parley_names[@]}"; do [ "$(http_status "$(ready_url "$name")")" = 200 ] || return 1; done
}

# kill -9 of the process this script runs as NAME, recorded as killed on purpose.
kill9() {
    local name=$1 pid=${pid_of[$1]}
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    killed_of[$name]="${killed_of[$name]:-} $pid"
}

record() { printf '%s\n' "$1" >> "$2"; }

# track NAME PID: the process this script now runs as NAME, and every pid NAME has had.
track() {
    pid_of[$1]=$2
    pids_of[$1]="${pids_of[$1]:-} $2"
}

# A free port below the kernel's ephemeral range, claimed for this run as deploy/local/services
# claims its own (a service restarted on its port must not find it taken by another stack, nor
# as the source port of some outgoing connection). Called as $(free_port), in a subshell.
free_port() {
    "$(dirname "${BASH_SOURCE[0]}")/../local/services" free-port "$work"
}
