# The chaos run's faults (sourced by deploy/chaos/run, whose settings and helpers they use):
# inject FAULT stops and restarts what the fault names and sets fault_start and fault_end;
# describe names it in the table; check_processes records a process that ended unbidden.
# shellcheck shell=bash
as_postgres() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_restart() {
    as_postgres timeout 120 /usr/lib/postgresql/15/bin/pg_ctl -D "$data/postgres/data" \
        -l "$data/postgres/postgres.log" -s -w -t 90 -m "$1" restart
}

# Captured first: grep -q would end the pipe early, and pipefail count that as a failure.
service_running() {
    local state
    state=$("$services" status "$data" 2>/dev/null) || true
    grep -q "^$1 running" <<< "$state"
}

restart_process() {
    case $1 in
        proxy-postgres) start_proxy "$1" "$pg_proxy_port" "$PARLEY_LOCAL_POSTGRES_PORT" ;;
        proxy-redis) start_proxy "$1" "$redis_proxy_port" "$PARLEY_LOCAL_REDIS_PORT" ;;
        *) start_parley "$1" ;;
    esac
}

# What ended unbidden is recorded (a failure) and started again, so that the run goes on:
# this run's processes (restart_unbidden_exits) and the services.
check_processes() {
    restart_unbidden_exits
    local service
    for service in postgres redis mosquitto; do
        service_running "$service" && continue
        say "UNEXPECTED: $service is not running during $current_fault; starting it again"
        record "{\"process\": \"$service\", \"t\": $(now_ms), \"during\": \"$current_fault\"}" "$out/incidents.jsonl"
        "$services" start "$data" "$service" >> "$out/logs/services.log" 2>&1 || true
    done
}

# Injects one fault; sets fault_start and fault_end (unix ms), the moment it began and the
# moment it was over (the process started again, the service back, the partition healed).
inject() {
    case $1 in
        kill-serve | kill-outbox | kill-fanout | kill-ingest | kill-push | kill-media | kill-maintenance | kill-webhooks)
            local name=${1#kill-}
            [ "$name" = serve ] || name="worker-$name"
            fault_start=$(now_ms)
            kill9 "$name"
            sleep "$down"
            start_parley "$name"
            fault_end=$(now_ms)
            ;;
        pg-fast | pg-immediate)
            fault_start=$(now_ms)
            pg_restart "${1#pg-}"
            fault_end=$(now_ms)
            ;;
        redis-restart | mqtt-restart)
            local service=${1%-restart}
            [ "$service" = mqtt ] && service=mosquitto
            fault_start=$(now_ms)
            "$services" stop "$data" "$service" >> "$out/logs/services.log" 2>&1
            "$services" start "$data" "$service" >> "$out/logs/services.log" 2>&1
            fault_end=$(now_ms)
            ;;
        redis-kill | mqtt-kill)
            local service=${1%-kill}
            [ "$service" = mqtt ] && service=mosquitto
            fault_start=$(now_ms)
            "$services" crash "$data" "$service" >> "$out/logs/services.log" 2>&1
            sleep "$down"
            "$services" start "$data" "$service" >> "$out/logs/services.log" 2>&1
            fault_end=$(now_ms)
            ;;
        pg-partition | redis-partition)
            local proxy="proxy-postgres"
            [ "$1" = redis-partition ] && proxy="proxy-redis"
            fault_start=$(now_ms)
            kill -USR1 "${pid_of[$proxy]}" || say "could not partition: $proxy is gone"
            sleep "$partition_seconds"
            kill -USR2 "${pid_of[$proxy]}" || say "could not heal: $proxy is gone"
            fault_end=$(now_ms)
            ;;
    esac
}

describe() {
    case $1 in
        kill-*) echo "kill -9 ${1#kill-}" ;;
        pg-fast) echo "postgres restart -m fast" ;;
        pg-immediate) echo "postgres restart -m immediate" ;;
        redis-restart) echo "redis restart" ;;
        redis-kill) echo "redis kill -9" ;;
        mqtt-restart) echo "mosquitto restart" ;;
        mqtt-kill) echo "mosquitto kill -9" ;;
        pg-partition) echo "postgres partition ${partition_seconds}s" ;;
        redis-partition) echo "redis partition ${partition_seconds}s" ;;
    esac
}

# Whose readiness shows the fault: the killed worker's own, serve's for everything else; and
# whether it is an outage of a dependency (readiness should go 503, then back to 200).
readiness_target() { case $1 in kill-serve) echo serve ;; kill-*) echo "worker-${1#kill-}" ;; *) echo serve ;; esac; }
is_dependency() { case $1 in kill-*) echo false ;; *) echo true ;; esac; }
