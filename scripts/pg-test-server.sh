#!/usr/bin/env bash
# A throwaway PostgreSQL server for the test suite: TLS on (self-signed
# certificate), listening on 127.0.0.1 at a free port and on a unix socket in
# DIR, password (SCRAM) authentication over TCP.
#
# Usage:
#   scripts/pg-test-server.sh start DIR    # prints `export AGENTS_TEST_POSTGRES_URL=...`
#   scripts/pg-test-server.sh restart DIR  # same server, same port
#   scripts/pg-test-server.sh stop DIR     # stops it (no error when not running)
#
#   eval "$(scripts/pg-test-server.sh start /tmp/pg)" && cargo test -p agents-store
#
# `initdb` refuses to run as root, so as root the server runs as the
# `postgres` OS user (created if missing) and DIR is handed to it. Progress
# goes to stderr; stdout carries only the export lines.
set -euo pipefail

usage() {
    echo "usage: $0 start|restart|stop DIR" >&2
    exit 2
}
die() {
    echo "pg-test-server: error: $*" >&2
    exit 1
}
log() { echo "pg-test-server: $*" >&2; }

[[ $# -eq 2 ]] || usage
command=$1
dir=$2

for tool in initdb pg_ctl postgres openssl; do
    command -v "$tool" >/dev/null || die "\`$tool\` is not on PATH"
done

if [[ $(id -u) -eq 0 ]]; then
    server_user=postgres
    if ! id -u "$server_user" >/dev/null 2>&1; then
        log "creating the OS user \`$server_user\`"
        useradd --system --no-create-home --shell /usr/sbin/nologin "$server_user"
    fi
    as_server() { runuser -u "$server_user" -- "$@"; }
else
    server_user=$(id -un)
    as_server() { "$@"; }
fi

data_dir() { echo "$dir/data"; }

port_is_free() {
    # A refused connection means nobody listens there.
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start_server() {
    as_server pg_ctl -D "$(data_dir)" -l "$dir/postgres.log" -w -t 60 start >&2
}

print_exports() {
    local port password
    port=$(cat "$dir/port")
    password=$(cat "$dir/password")
    echo "export AGENTS_TEST_POSTGRES_URL='postgres://postgres:$password@127.0.0.1:$port/postgres'"
    echo "export AGENTS_TEST_POSTGRES_DIR='$dir'"
}

case $command in
start)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    [[ ${#dir} -lt 90 ]] || die "\`$dir\` is too long for a unix socket path; use a shorter DIR"
    [[ ! -e $(data_dir) ]] || die "\`$(data_dir)\` already exists; stop it and remove DIR first"
    if [[ $(id -u) -eq 0 ]]; then
        chown "$server_user" "$dir"
        # A private parent (e.g. from `mktemp -d`) hides DIR from the server
        # user: grant search (not read) permission on our own ancestors.
        ancestor=$(dirname "$dir")
        while ! as_server test -x "$ancestor" && [[ $ancestor != / ]]; do
            [[ $(stat -c %u "$ancestor") -eq 0 ]] || break
            log "granting search permission on \`$ancestor\` to \`$server_user\`"
            chmod o+x "$ancestor"
            ancestor=$(dirname "$ancestor")
        done
        as_server test -w "$dir" || die "\`$server_user\` cannot write \`$dir\` (is a parent directory private?)"
    fi
    openssl rand -hex 16 >"$dir/password"
    chmod 600 "$dir/password"
    [[ $(id -u) -ne 0 ]] || chown "$server_user" "$dir/password"

    log "initdb into $(data_dir)"
    as_server initdb -D "$(data_dir)" -U postgres --pwfile="$dir/password" \
        --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --no-locale --no-sync >"$dir/initdb.log" 2>&1 ||
        die "initdb failed; see \`$dir/initdb.log\`"

    log "generating a self-signed TLS certificate"
    as_server openssl req -x509 -newkey rsa:2048 -nodes -days 7 -subj "/CN=localhost" \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
        -keyout "$(data_dir)/server.key" -out "$(data_dir)/server.crt" >"$dir/openssl.log" 2>&1 ||
        die "openssl failed; see \`$dir/openssl.log\`"
    as_server chmod 600 "$(data_dir)/server.key"

    for attempt in 1 2 3 4 5 6 7 8; do
        port=$((20000 + RANDOM % 30000))
        port_is_free "$port" || continue
        as_server tee "$(data_dir)/postgresql.auto.conf" >/dev/null <<EOF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
ssl = on
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
max_connections = 300
EOF
        echo "$port" >"$dir/port"
        log "starting on 127.0.0.1:$port (attempt $attempt)"
        if start_server; then
            print_exports
            exit 0
        fi
        log "start failed; see \`$dir/postgres.log\`"
    done
    die "could not start PostgreSQL; see \`$dir/postgres.log\`"
    ;;
restart)
    dir=$(cd "$dir" && pwd)
    [[ -e $(data_dir) ]] || die "no server in \`$dir\`"
    as_server pg_ctl -D "$(data_dir)" -m fast -w -t 60 stop >&2 || true
    start_server || die "restart failed; see \`$dir/postgres.log\`"
    print_exports
    ;;
stop)
    [[ -d $dir && -e $dir/data ]] || exit 0
    dir=$(cd "$dir" && pwd)
    if as_server pg_ctl -D "$(data_dir)" status >/dev/null 2>&1; then
        as_server pg_ctl -D "$(data_dir)" -m fast -w -t 60 stop >&2
    fi
    ;;
*)
    usage
    ;;
esac
