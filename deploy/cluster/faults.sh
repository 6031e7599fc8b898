# The cluster's faults (sourced by deploy/cluster/run): inject FAULT sets fault_start and
# fault_end (unix ms): when it began and when what it took down was back (started again, or
# back as a replica). describe names a fault in the table.
# shellcheck shell=bash
#
#   kill-serve      kill -9 of serve-1; HAProxy sends everything to serve-2; started 2 s later
#   kill-worker     kill -9 of worker-1; worker-2 goes on, takes over the ingest's shared
#                   subscription and claims what worker-1 had read; started 2 s later
#   redis-primary   kill -9 of Redis's primary; the Sentinels promote the replica (recorded:
#                   failover_ms), Parley follows; the old primary, started again, rejoins as
#                   the new primary's replica
#   pg-replica      kill -9 of PostgreSQL's replica (the postmaster); reads go to the primary;
#                   started again 2 s later, it catches up and is used again

inject() {
    failover_ms=''
    case $1 in
        kill-serve | kill-worker)
            local name=${1#kill-}-1
            fault_start=$(now_ms)
            kill9 "$name"
            sleep "$down"
            start_parley "$name"
            fault_end=$(now_ms)
            ;;
        redis-primary)
            local old new
            old=$(redis_primary_port) || die "no Sentinel names Redis's primary"
            fault_start=$(now_ms)
            kill -KILL "$(head -n1 "$(redis_pidfile "$old")")"
            for _ in $(seq 300); do
                new=$(redis_primary_port || true)
                [ -n "$new" ] && [ "$new" != "$old" ] && break
                sleep 0.1
            done
            [ -n "$new" ] && [ "$new" != "$old" ] || die "the Sentinels did not promote the replica within 30 s"
            failover_ms=$(( $(now_ms) - fault_start ))
            say "Sentinel promoted :$new in ${failover_ms} ms; starting :$old again"
            start_redis "$old"
            fault_end=$(now_ms)
            ;;
        pg-replica)
            fault_start=$(now_ms)
            kill -KILL "$(head -n1 "$data/postgres-replica-$pg_replica_port/data/postmaster.pid")"
            sleep "$down"
            "$root/deploy/local/replica" start "$data" "$pg_replica_port" >> "$out/logs/services.log" 2>&1
            fault_end=$(now_ms)
            ;;
    esac
}

# The two Redis servers: deploy/local's (the first primary) and deploy/local/sentinel's replica.
redis_pidfile() {
    if [ "$1" = "$PARLEY_LOCAL_REDIS_PORT" ]; then echo "$data/redis/redis.pid"; else echo "$data/sentinel/replica.pid"; fi
}
start_redis() {
    if [ "$1" = "$PARLEY_LOCAL_REDIS_PORT" ]; then
        "$services" start "$data" redis >> "$out/logs/services.log" 2>&1
    else
        redis-server "$data/sentinel/replica.conf"
    fi
}

describe() {
    case $1 in
        kill-serve) echo "kill -9 serve-1" ;;
        kill-worker) echo "kill -9 worker-1" ;;
        redis-primary) echo "kill -9 Redis primary (failover)" ;;
        pg-replica) echo "kill -9 PostgreSQL replica" ;;
    esac
}

# Whose readiness shows the fault: the killed process's own; serve-2's for the stores.
readiness_target() { case $1 in kill-serve) echo serve-1 ;; kill-worker) echo worker-1 ;; *) echo serve-2 ;; esac; }

# A process that ended unbidden (restart_unbidden_exits) is started again.
restart_process() { if [ "$1" = haproxy ]; then start_haproxy; else start_parley "$1"; fi; }
check_processes() { restart_unbidden_exits; }
