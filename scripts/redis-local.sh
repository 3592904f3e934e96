#!/usr/bin/env bash
# Throwaway Redis servers on loopback for bloomlab's Redis tests (crates/redis).
#
#   scripts/redis-local.sh start     one server on a free 127.0.0.1 port; prints its URL
#   scripts/redis-local.sh cluster   three cluster masters on free 127.0.0.1 ports, slots assigned
#                                    (redis-cli --cluster create, 0 replicas); prints their URLs,
#                                    comma-separated
#   scripts/redis-local.sh status    what this script started and whether it still runs
#   scripts/redis-local.sh stop      stops what this script started (by the pids it recorded) and
#                                    removes the temp dirs
#   scripts/redis-local.sh crash     SIGKILLs the single server it started (a power cut: nothing
#                                    is flushed on the way down), for persistence tests
#   scripts/redis-local.sh clean [URL[,URL...]]
#                                    deletes bloomlab's own keys (leftovers of killed runs) from
#                                    the server(s) at URL (a cluster: every node URL), by default
#                                    from what this script started: it SCANs for the patterns
#                                    '{bloomlab-*' (filters) and 'bloomlab-*' (HyperLogLogs) and
#                                    UNLINKs what it finds, nothing else (never KEYS, never FLUSH);
#                                    prints how many keys it deleted. Keys of a run still going
#                                    are deleted too: run it when no bloomlab run uses the server.
#
# Typical use:
#   export BLOOMLAB_REDIS_URL=$(scripts/redis-local.sh start)
#   export BLOOMLAB_REDIS_CLUSTER_URLS=$(scripts/redis-local.sh cluster)
#   cargo test --release -p bloomlab-redis
#   scripts/redis-local.sh stop
#
# Each server binds 127.0.0.1 only and keeps its data, pid file and log in its own `mktemp -d`
# dir. Nothing is persisted (`--save ''`, `--appendonly no`), unless BLOOMLAB_REDIS_PERSIST is
# `aof` (append-only file, fsync on every write: `--appendonly yes --appendfsync always`) or `rdb`
# (a snapshot on shutdown: `--save '3600 1'`); with BLOOMLAB_REDIS_DATA_DIR=DIR the single server
# keeps its data in DIR instead of a temp dir, and `stop`/`crash` leave DIR in place, so a second
# `start` with the same DIR restarts from what the first one persisted. Memory settings are explicit because
# the tests depend on them: `--maxmemory` (default 2gb, override with BLOOMLAB_REDIS_MAXMEMORY;
# the > 2^32-bit filter test needs about 600 MB) with `--maxmemory-policy noeviction`, because an
# evicting policy would silently drop a filter's bits (false negatives); `--proto-max-bulk-len
# 512mb`, the largest string (2^32 bits) a shard may reach.
#
# State files (pids, ports, dirs, URLs) live in $BLOOMLAB_REDIS_STATE_DIR, by default
# target/redis-local/ of this repository; `stop` kills only the pids recorded there, and only if
# they are still redis-server processes.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
state_dir=${BLOOMLAB_REDIS_STATE_DIR:-$repo/target/redis-local}
maxmemory=${BLOOMLAB_REDIS_MAXMEMORY:-2gb}
persist=${BLOOMLAB_REDIS_PERSIST:-none}
data_dir=${BLOOMLAB_REDIS_DATA_DIR:-}
case "$persist" in
    none) persist_args=(--save '' --appendonly no) ;;
    aof) persist_args=(--save '' --appendonly yes --appendfsync always) ;;
    rdb) persist_args=(--save '3600 1' --appendonly no) ;;
    *) echo "redis-local.sh: BLOOMLAB_REDIS_PERSIST=$persist: it must be none, aof or rdb" >&2; exit 1 ;;
esac

die() { echo "redis-local.sh: $*" >&2; exit 1; }
note() { echo "redis-local.sh: $*" >&2; }

need_tools() {
    command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 ||
        die "redis-server and redis-cli are needed: apt-get install -y redis-server (Debian)"
}

# Whether something listens on 127.0.0.1:$1.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A port in 20000..49999 that is free, and whose cluster bus port (+10000) is free too.
free_port() {
    local p tries
    for tries in $(seq 1 200); do
        p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 30000 ))
        if ! port_busy "$p" && ! port_busy $(( p + 10000 )); then
            echo "$p"
            return 0
        fi
    done
    die "no free port found in 20000..49999 after 200 tries"
}

# Starts one server on a free port, in a new temp dir or in $KEEP_DIR when that is set. Prints
# "PORT PID DIR". Extra arguments are passed to redis-server. Retries on another port if the one
# chosen was taken meanwhile.
start_server() {
    local attempt port dir pid
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        if [ -n "${KEEP_DIR:-}" ]; then
            dir=$KEEP_DIR
            mkdir -p "$dir"
            rm -f "$dir/redis.pid"
        else
            dir=$(mktemp -d "${TMPDIR:-/tmp}/bloomlab-redis.XXXXXX")
        fi
        if redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" \
            --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" \
            "${persist_args[@]}" \
            --maxmemory "$maxmemory" --maxmemory-policy noeviction \
            --proto-max-bulk-len 512mb "$@" >/dev/null 2>&1; then
            for _ in $(seq 1 100); do
                if [ "$(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null)" = PONG ] &&
                    [ -s "$dir/redis.pid" ]; then
                    pid=$(cat "$dir/redis.pid")
                    echo "$port $pid $dir"
                    return 0
                fi
                sleep 0.05
            done
        fi
        note "a server on port $port did not start (attempt $attempt); its log:"
        tail -n 5 "$dir/redis.log" >&2 2>/dev/null || true
        [ -s "$dir/redis.pid" ] && stop_pid "$(cat "$dir/redis.pid")"
        [ -n "${KEEP_DIR:-}" ] || rm -rf "$dir"
    done
    die "could not start redis-server after 5 attempts"
}

# Stops pid $1 if it is still a redis-server process (a recycled pid is left alone).
stop_pid() {
    local pid=$1
    if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q redis-server; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || return 0
            sleep 0.05
        done
        note "pid $pid did not stop on SIGTERM within 5 s: SIGKILL"
        kill -9 "$pid" 2>/dev/null || true
    fi
}

# Refuses to start a kind ($1: single or cluster) whose recorded servers still run.
check_not_running() {
    local file="$state_dir/$1.state"
    if [ -f "$file" ]; then
        local pid alive=0
        for pid in $(sed -n 's/^pid=//p' "$file"); do
            kill -0 "$pid" 2>/dev/null && alive=1
        done
        if [ "$alive" -eq 1 ]; then
            die "a $1 started by this script still runs ($(sed -n 's/^url=//p' "$file")); run '$0 stop' first"
        fi
        rm -f "$file"
    fi
}

cmd_start() {
    need_tools
    mkdir -p "$state_dir"
    check_not_running single
    local port pid dir
    read -r port pid dir < <(KEEP_DIR=$data_dir start_server)
    local url="redis://127.0.0.1:$port"
    if [ -n "$data_dir" ]; then
        printf 'url=%s\npid=%s\nkept=%s\n' "$url" "$pid" "$dir" >"$state_dir/single.state"
    else
        printf 'url=%s\npid=%s\ndir=%s\n' "$url" "$pid" "$dir" >"$state_dir/single.state"
    fi
    note "started redis-server pid $pid on $url (persistence: $persist; data, log: $dir)"
    echo "$url"
}

cmd_cluster() {
    need_tools
    mkdir -p "$state_dir"
    check_not_running cluster
    local file="$state_dir/cluster.state" i port pid dir urls="" addrs=()
    : >"$file"
    for i in 1 2 3; do
        read -r port pid dir < <(start_server --cluster-enabled yes \
            --cluster-config-file nodes.conf --cluster-node-timeout 5000)
        printf 'pid=%s\ndir=%s\n' "$pid" "$dir" >>"$file"
        addrs+=("127.0.0.1:$port")
        urls="${urls:+$urls,}redis://127.0.0.1:$port"
    done
    printf 'url=%s\n' "$urls" >>"$file"
    if ! redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes \
        >"$state_dir/cluster-create.log" 2>&1; then
        cat "$state_dir/cluster-create.log" >&2
        cmd_stop >/dev/null 2>&1 || true
        die "redis-cli --cluster create failed (log above); the nodes were stopped"
    fi
    local addr ok
    for _ in $(seq 1 200); do
        ok=1
        for addr in "${addrs[@]}"; do
            redis-cli -h "${addr%:*}" -p "${addr#*:}" cluster info 2>/dev/null |
                grep -q '^cluster_state:ok' || ok=0
        done
        if [ "$ok" -eq 1 ]; then
            note "cluster of 3 masters ready: $urls (state: $file)"
            echo "$urls"
            return 0
        fi
        sleep 0.1
    done
    cmd_stop >/dev/null 2>&1 || true
    die "the cluster did not report cluster_state:ok within 20 s; the nodes were stopped"
}

cmd_stop() {
    local file pid dir stopped=0
    for file in "$state_dir/single.state" "$state_dir/cluster.state"; do
        [ -f "$file" ] || continue
        for pid in $(sed -n 's/^pid=//p' "$file"); do
            stop_pid "$pid"
            stopped=$((stopped + 1))
        done
        for dir in $(sed -n 's/^dir=//p' "$file"); do
            case "$dir" in
                */bloomlab-redis.*) rm -rf "$dir" ;;
                *) note "not removing $dir: not a dir this script made" ;;
            esac
        done
        rm -f "$file"
    done
    note "stopped $stopped server(s)"
}

cmd_crash() {
    local file="$state_dir/single.state" pid
    [ -f "$file" ] || die "no single server started by this script (state: $file)"
    pid=$(sed -n 's/^pid=//p' "$file")
    if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q redis-server; then
        kill -9 "$pid"
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.05
        done
        note "SIGKILLed redis-server pid $pid"
    else
        note "pid $pid is not a running redis-server: nothing to kill"
    fi
    for dir in $(sed -n 's/^dir=//p' "$file"); do
        case "$dir" in */bloomlab-redis.*) rm -rf "$dir" ;; esac
    done
    rm -f "$file"
}

# A URL with its credentials replaced by *** (for messages).
shown() { sed -E 's#(://)[^/@]*@#\1***@#g' <<<"$1"; }

cmd_clean() {
    need_tools
    local urls=${1:-} file u
    if [ -z "$urls" ]; then
        for file in "$state_dir/single.state" "$state_dir/cluster.state"; do
            [ -f "$file" ] || continue
            urls="${urls:+$urls,}$(sed -n 's/^url=//p' "$file")"
        done
        [ -n "$urls" ] || die "clean: no URL given and no server started by this script (state: $state_dir)"
    fi
    local IFS=, found left
    for u in $urls; do
        u=${u// /}
        [ -n "$u" ] || continue
        # redis-cli 7.0 fails `-u redis://:PASSWORD@...` (an empty user): name the default user.
        u=$(sed -E 's#^(rediss?://):#\1default:#' <<<"$u")
        redis-cli --no-auth-warning -u "$u" ping 2>/dev/null | grep -q PONG ||
            die "clean: cannot reach $(shown "$u") (or it refused the password)"
        # SCAN (incremental: it never blocks the server as KEYS would) for bloomlab's prefixes
        # only; one redis-cli reads the UNLINKs from stdin (one key per command, so a cluster
        # node never sees a cross-slot command). Names with quotes or backslashes are skipped:
        # bloomlab never makes them (keys::check_name).
        found=$(scan_bloomlab "$u" | grep -c . || true)
        if [ "$found" -gt 0 ]; then
            scan_bloomlab "$u" | grep -v '["\\]' | sed 's/.*/UNLINK "&"/' |
                redis-cli --no-auth-warning -u "$u" >/dev/null
        fi
        left=$(scan_bloomlab "$u" | grep -c . || true)
        note "clean: $(shown "$u"): deleted $((found - left)) bloomlab key(s)"
        [ "$left" -eq 0 ] || die "clean: $left bloomlab key(s) left on $(shown "$u")"
    done
}

# bloomlab's keys on the node at URL $1, one per line, each once.
scan_bloomlab() {
    local pat
    for pat in '{bloomlab-*' 'bloomlab-*'; do
        redis-cli --no-auth-warning -u "$1" --scan --pattern "$pat"
    done | sort -u
}

cmd_status() {
    local kind file pid running=0
    for kind in single cluster; do
        file="$state_dir/$kind.state"
        [ -f "$file" ] || { echo "$kind: not started"; continue; }
        echo "$kind: $(sed -n 's/^url=//p' "$file")"
        for pid in $(sed -n 's/^pid=//p' "$file"); do
            if kill -0 "$pid" 2>/dev/null; then
                echo "  pid $pid running"
                running=1
            else
                echo "  pid $pid gone"
            fi
        done
    done
    [ "$running" -eq 1 ]
}

case "${1:-}" in
    start) cmd_start ;;
    cluster) cmd_cluster ;;
    stop) cmd_stop ;;
    crash) cmd_crash ;;
    status) cmd_status ;;
    clean) cmd_clean "${2:-}" ;;
    *) die "usage: $0 start|cluster|status|stop|crash|clean [URL[,URL...]]" ;;
esac
