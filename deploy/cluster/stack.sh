# The cluster's processes (sourced by deploy/cluster/run, whose settings they use): two
# `parley serve` and two `parley worker`, HAProxy in front of the serves, and what each one's
# readiness is asked at. Stopping and waiting come from deploy/chaos/processes.sh.
# shellcheck shell=bash

# Every process reaches the primary and the replica of PostgreSQL, finds Redis's primary
# through the Sentinels and waits for one replica to hold each queued job. The environment
# wins over PARLEY_CONFIG_FILE (deploy/local's parley.env).
cluster_env() {
    echo PARLEY_POSTGRES_REPLICAS="127.0.0.1:$pg_replica_port"
    echo PARLEY_REDIS_SENTINELS="127.0.0.1:${sentinel_ports[0]},127.0.0.1:${sentinel_ports[1]},127.0.0.1:${sentinel_ports[2]}"
    echo PARLEY_REDIS_WAIT_REPLICAS=1
}

# start_parley NAME: serve-1, serve-2, worker-1 or worker-2, each on its own ports.
start_parley() {
    local name=$1 pid env
    mapfile -t env < <(cluster_env)
    case $name in
        serve-*)
            local i=${name#serve-}
            env "${env[@]}" PARLEY_HTTP_PORT="${serve_http[$i]}" PARLEY_HTTPS_PORT="${serve_https[$i]}" \
                PARLEY_INTERNAL_PORT="${serve_internal[$i]}" "$bin" serve >> "$data/logs/$name.log" 2>&1 &
            pid=$!
            ;;
        worker-*)
            # Each ingest its own kept session: two with one client id would take it from each
            # other. worker-1 takes over the one-process worker's: mosquitto goes on handing a
            # share of chat-in to an offline kept session, which nobody would come back for.
            local session=parley-ingest-local
            [ "$name" = worker-1 ] || session="parley-ingest-$name"
            env "${env[@]}" PARLEY_WORKER_INTERNAL_PORT="${worker_internal[${name#worker-}]}" \
                PARLEY_INGEST_SESSION="$session" \
                "$bin" worker >> "$data/logs/$name.log" 2>&1 &
            pid=$!
            ;;
    esac
    track "$name" "$pid"
    echo "$pid" > "$data/run/$name.pid"
}

ready_url() {
    case $1 in
        serve-*) echo "http://127.0.0.1:${serve_internal[${1#serve-}]}/health/ready" ;;
        worker-*) echo "http://127.0.0.1:${worker_internal[${1#worker-}]}/health/ready" ;;
    esac
}

# HAProxy terminates the clients' TLS (HTTP/2 or HTTP/1.1 by ALPN) and speaks HTTP/2 over TLS
# to the serves, verifying their certificate; the broker plugin's ACL questions come through it
# too (the internal frontend). A serve is in the rotation while /health/live answers: the
# serves share their dependencies, so checking /health/ready would take both out together
# when PostgreSQL or Redis falters, and turn a 503 with a reason into HAProxy's own.
# A request whose serve refused the connection is sent to the other; one whose serve died
# before answering too, if it is a read or a message send (idempotent by its uid): another
# POST might have been carried out.
write_haproxy_config() {
    cat "$data/tls/server.crt" "$data/tls/server.key" > "$work/haproxy.pem"
    chmod 600 "$work/haproxy.pem"
    # Two descriptors a connection (client and server side), within this shell's limit.
    local maxconn=$(( ($(ulimit -n) - 100) / 2 ))
    [ "$maxconn" -le 100000 ] || maxconn=100000
    cat > "$work/haproxy.cfg" <<CONF
global
    maxconn $maxconn
    stats socket $work/haproxy.sock mode 600 level admin
    ssl-default-bind-options ssl-min-ver TLSv1.2
    ssl-default-server-options ssl-min-ver TLSv1.2

defaults
    mode http
    log stderr format short local0 notice
    timeout connect 2s
    timeout client 300s
    timeout server 60s
    timeout http-request 60s
    timeout queue 5s
    retries 2
    option redispatch 1
    retry-on conn-failure empty-response
    option http-buffer-request
    default-server inter 500ms fall 2 rise 2

frontend public
    bind 127.0.0.1:$lb_https_port ssl crt $work/haproxy.pem alpn h2,http/1.1
    default_backend serves

backend serves
    balance leastconn
    http-request disable-l7-retry if !METH_GET !METH_HEAD !{ path_reg ^/v1/rooms/[0-9]+/messages\$ }
    option httpchk GET /health/live
    http-check expect status 200
    server serve-1 127.0.0.1:${serve_https[1]} ssl verify required ca-file $data/tls/server.crt verifyhost localhost alpn h2 check port ${serve_internal[1]} no-check-ssl
    server serve-2 127.0.0.1:${serve_https[2]} ssl verify required ca-file $data/tls/server.crt verifyhost localhost alpn h2 check port ${serve_internal[2]} no-check-ssl

frontend internal
    bind 127.0.0.1:$lb_internal_port
    default_backend internals

backend internals
    balance roundrobin
    option httpchk GET /health/live
    http-check expect status 200
    server serve-1 127.0.0.1:${serve_internal[1]} check
    server serve-2 127.0.0.1:${serve_internal[2]} check
CONF
}

start_haproxy() {
    write_haproxy_config
    haproxy -c -q -f "$work/haproxy.cfg" || die "HAProxy refuses its configuration ($work/haproxy.cfg)"
    haproxy -db -f "$work/haproxy.cfg" >> "$data/logs/haproxy.log" 2>&1 &
    track haproxy $!
    for _ in $(seq 100); do
        [ "$(http_status "http://127.0.0.1:$lb_internal_port/health/live")" = 200 ] && return 0
        alive "${pid_of[haproxy]}" || break
        sleep 0.1
    done
    die "HAProxy did not start forwarding; see $data/logs/haproxy.log"
}

# Redis's primary as the Sentinels name it: its port.
redis_primary_port() {
    local port
    for port in "${sentinel_ports[@]}"; do
        redis-cli -p "$port" SENTINEL get-master-addr-by-name parley 2>/dev/null | sed -n 2p | grep . && return 0
    done
    return 1
}
