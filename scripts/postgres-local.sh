#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback for bloomlab's scenarios (crates/scenarios).
#
#   scripts/postgres-local.sh start    initdb + pg_ctl start on a free 127.0.0.1 port; prints its URL
#   scripts/postgres-local.sh status   what this script started and whether it still runs
#   scripts/postgres-local.sh stop     stops what this script started (by the pid it recorded) and
#                                      removes the cluster's temp dir
#   scripts/postgres-local.sh restart  starts the recorded cluster again on its data dir and port
#                                      (after a crash or a kill: its committed data is kept);
#                                      prints its URL
#
# Typical use:
#   export BLOOMLAB_POSTGRES_URL=$(scripts/postgres-local.sh start)
#   cargo test --release -p bloomlab-scenarios
#   cargo run --release --bin scenario -- dedup --db "$BLOOMLAB_POSTGRES_URL"
#   scripts/postgres-local.sh stop
#
# PostgreSQL refuses to run as root, and CI runs as root: the cluster then runs as the `postgres`
# user that Debian's package creates (or `nobody` when there is none; BLOOMLAB_POSTGRES_USER
# overrides), through runuser, in a `mktemp -d` dir that user owns. As any other user it runs as
# that user. The cluster listens on 127.0.0.1 only (its Unix socket sits in its own dir), has one
# superuser `bloomlab` with trust authentication on loopback (a throwaway cluster for tests, never
# a server to keep), and keeps PostgreSQL's default durability settings (fsync on), because the
# scenarios measure what a commit costs. With BLOOMLAB_POSTGRES_PASSWORD set (letters, digits, _ and
# - only), loopback TCP logins need that password instead (scram-sha-256; the Unix socket stays
# trust), and the printed URL carries it: for tests of wrong passwords and of redaction.
#
# Tools: initdb and pg_ctl from PATH, else from the newest /usr/lib/postgresql/*/bin (Debian:
# apt-get install -y postgresql). State (url, pid, dir) lives in $BLOOMLAB_POSTGRES_STATE_DIR, by
# default target/postgres-local/ of this repository; `stop` stops only the postmaster pid recorded
# there, and only if it is still a postgres process.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
state_dir=${BLOOMLAB_POSTGRES_STATE_DIR:-$repo/target/postgres-local}
state="$state_dir/postgres.state"
password=${BLOOMLAB_POSTGRES_PASSWORD:-}

# A URL as messages show it: any password replaced by ***.
redact() { sed 's#://\([^:@/]*\):[^@]*@#://\1:***@#' <<<"$1"; }

die() { echo "postgres-local.sh: $*" >&2; exit 1; }
note() { echo "postgres-local.sh: $*" >&2; }

bin_dir() {
    if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
        dirname "$(command -v pg_ctl)"
        return 0
    fi
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] ||
        die "initdb and pg_ctl are needed: apt-get install -y postgresql (Debian)"
    echo "$d"
}

# The user the cluster runs as, and a prefix that runs a command as that user.
run_user() {
    if [ "$(id -u)" -ne 0 ]; then
        id -un
    elif [ -n "${BLOOMLAB_POSTGRES_USER:-}" ]; then
        echo "$BLOOMLAB_POSTGRES_USER"
    elif id postgres >/dev/null 2>&1; then
        echo postgres
    else
        echo nobody
    fi
}
as_user() {
    if [ "$(id -u)" -ne 0 ]; then
        "$@"
    else
        runuser -u "$user" -- "$@"
    fi
}

# Whether something listens on 127.0.0.1:$1.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() {
    local p
    for _ in $(seq 1 200); do
        p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 30000 ))
        if ! port_busy "$p"; then
            echo "$p"
            return 0
        fi
    done
    die "no free port found in 20000..49999 after 200 tries"
}

# Stops pid $1 if it is still a postgres process (a recycled pid is left alone): SIGINT is
# PostgreSQL's fast shutdown.
stop_pid() {
    local pid=$1
    if [ -r "/proc/$pid/comm" ] && grep -q postgres "/proc/$pid/comm"; then
        kill -INT "$pid" 2>/dev/null || true
        for _ in $(seq 1 200); do
            kill -0 "$pid" 2>/dev/null || return 0
            sleep 0.05
        done
        note "pid $pid did not stop on SIGINT within 10 s: SIGQUIT"
        kill -QUIT "$pid" 2>/dev/null || true
    fi
}

cmd_start() {
    local bin user dir port pid url attempt auth userinfo
    bin=$(bin_dir)
    user=$(run_user)
    auth=(--auth=trust)
    userinfo=bloomlab
    if [ -n "$password" ]; then
        [[ "$password" =~ ^[A-Za-z0-9_-]+$ ]] ||
            die "BLOOMLAB_POSTGRES_PASSWORD may hold only letters, digits, _ and -"
        auth=(--auth-local=trust --auth-host=scram-sha-256)
        userinfo="bloomlab:$password"
    fi
    id "$user" >/dev/null 2>&1 || die "user $user does not exist (set BLOOMLAB_POSTGRES_USER)"
    mkdir -p "$state_dir"
    if [ -f "$state" ]; then
        pid=$(sed -n 's/^pid=//p' "$state")
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
            die "a cluster started by this script still runs ($(redact "$(sed -n 's/^url=//p' "$state")")); run '$0 stop' first"
        fi
        rm -f "$state"
    fi
    for attempt in 1 2 3; do
        dir=$(mktemp -d "${TMPDIR:-/tmp}/bloomlab-postgres.XXXXXX")
        chmod 755 "$dir"
        [ "$(id -u)" -eq 0 ] && chown "$user" "$dir"
        if [ -n "$password" ]; then
            # initdb reads the superuser's password from a file; it is removed right after.
            (umask 077 && printf '%s\n' "$password" >"$dir/pwfile")
            [ "$(id -u)" -eq 0 ] && chown "$user" "$dir/pwfile"
            auth+=(--pwfile="$dir/pwfile")
        fi
        as_user "$bin/initdb" -D "$dir/data" -U bloomlab "${auth[@]}" -E UTF8 --no-sync \
            >"$dir/initdb.log" 2>&1 || {
            cat "$dir/initdb.log" >&2
            rm -rf "$dir"
            die "initdb failed as user $user (log above)"
        }
        rm -f "$dir/pwfile"
        port=$(free_port)
        if as_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 30 \
            -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir" \
            start >/dev/null 2>&1; then
            pid=$(head -n 1 "$dir/data/postmaster.pid")
            url="postgres://$userinfo@127.0.0.1:$port/postgres"
            printf 'url=%s\npid=%s\ndir=%s\nuser=%s\nport=%s\n' "$url" "$pid" "$dir" "$user" "$port" \
                >"$state"
            note "started PostgreSQL ($("$bin/pg_ctl" --version)) pid $pid as $user on $(redact "$url") (data, log: $dir)"
            echo "$url"
            return 0
        fi
        note "PostgreSQL on port $port did not start (attempt $attempt); its log:"
        tail -n 5 "$dir/postgres.log" >&2 2>/dev/null || true
        [ -s "$dir/data/postmaster.pid" ] && stop_pid "$(head -n 1 "$dir/data/postmaster.pid")"
        rm -rf "$dir"
    done
    die "could not start PostgreSQL after 3 attempts"
}

# Starts the recorded cluster again (same data dir, same port): PostgreSQL's crash recovery
# replays its log, so what was committed before a kill is there again.
cmd_restart() {
    [ -f "$state" ] || die "nothing to restart: no cluster recorded in $state_dir"
    local bin user dir port pid url
    bin=$(bin_dir)
    pid=$(sed -n 's/^pid=//p' "$state")
    dir=$(sed -n 's/^dir=//p' "$state")
    user=$(sed -n 's/^user=//p' "$state")
    port=$(sed -n 's/^port=//p' "$state")
    url=$(sed -n 's/^url=//p' "$state")
    [ -n "$port" ] && [ -d "$dir/data" ] || die "the state in $state names no port or data dir"
    # A killed postmaster can linger a moment as a zombie (State: Z) until it is reaped.
    for _ in $(seq 1 40); do
        [ -n "$pid" ] && [ -r "/proc/$pid/status" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" ||
            break
        sleep 0.25
    done
    if [ -n "$pid" ] && [ -r "/proc/$pid/status" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" &&
        grep -q postgres "/proc/$pid/comm" 2>/dev/null; then
        die "the recorded cluster (pid $pid) still runs; run '$0 stop' first"
    fi
    # Backends of a killed postmaster exit on their own once they notice; the start waits for
    # them (PostgreSQL refuses to start while the old shared memory is in use).
    for attempt in $(seq 1 20); do
        if as_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 30 \
            -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir" \
            start >/dev/null 2>&1; then
            pid=$(head -n 1 "$dir/data/postmaster.pid")
            printf 'url=%s\npid=%s\ndir=%s\nuser=%s\nport=%s\n' "$url" "$pid" "$dir" "$user" "$port" \
                >"$state"
            note "restarted PostgreSQL pid $pid on port $port (attempt $attempt)"
            echo "$url"
            return 0
        fi
        sleep 0.5
    done
    tail -n 5 "$dir/postgres.log" >&2 2>/dev/null || true
    die "could not restart PostgreSQL on port $port (log above)"
}

cmd_stop() {
    [ -f "$state" ] || { note "nothing to stop"; return 0; }
    local pid dir
    pid=$(sed -n 's/^pid=//p' "$state")
    dir=$(sed -n 's/^dir=//p' "$state")
    [ -n "$pid" ] && stop_pid "$pid"
    case "$dir" in
        */bloomlab-postgres.*) rm -rf "$dir" ;;
        *) note "not removing $dir: not a dir this script made" ;;
    esac
    rm -f "$state"
    note "stopped PostgreSQL pid $pid"
}

cmd_status() {
    [ -f "$state" ] || { echo "postgres: not started"; return 1; }
    local pid
    pid=$(sed -n 's/^pid=//p' "$state")
    echo "postgres: $(redact "$(sed -n 's/^url=//p' "$state")")"
    if kill -0 "$pid" 2>/dev/null; then
        echo "  pid $pid running"
    else
        echo "  pid $pid gone"
        return 1
    fi
}

case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    restart) cmd_restart ;;
    *) die "usage: $0 start|status|stop|restart" ;;
esac
