#!/usr/bin/env bash
# Starts a throwaway nats-server with JetStream on 127.0.0.1 (free ports) for tests.
# Usage: start-nats.sh [state-dir]   (default: <repo>/.local)
# Writes NATS_URL and NATS_MONITOR_URL to <state-dir>/env; stop it with stop.sh [state-dir].
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STATE_DIR="$(resolve_state_dir "${1:-}")"
ENV_FILE="$STATE_DIR/env"
NATS_DIR="$STATE_DIR/nats"

NATS_SERVER="$(command -v nats-server || true)"
[ -n "$NATS_SERVER" ] || { apt_install nats-server; NATS_SERVER="$(command -v nats-server)"; } \
  || die "nats-server not found after install"

# A server left running from this state dir (e.g. an interrupted run) is stopped first.
stop_nats "$STATE_DIR"
rm -rf "$NATS_DIR" && mkdir -p "$NATS_DIR"

read -r PORT MONITOR_PORT < <(free_ports 2)
"$NATS_SERVER" -js -a 127.0.0.1 -p "$PORT" -m "$MONITOR_PORT" -sd "$NATS_DIR/store" \
  -l "$NATS_DIR/nats.log" </dev/null >/dev/null 2>&1 &
PID=$!
disown "$PID"
echo "$PID" > "$STATE_DIR/nats.pid"

HEALTH_URL="http://127.0.0.1:$MONITOR_PORT/healthz?js-enabled-only=true"
healthy() {
  alive "$PID" || return 1
  if command -v curl >/dev/null; then
    curl -fsS --max-time 2 "$HEALTH_URL"
  else
    node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' \
      "$HEALTH_URL"
  fi
}
if ! wait_for 30 healthy; then
  tail -n 30 "$NATS_DIR/nats.log" >&2 || true
  die "nats-server not healthy on port $PORT (log: $NATS_DIR/nats.log)"
fi

URL="nats://127.0.0.1:$PORT"
env_file_set "$ENV_FILE" NATS_URL "$URL"
env_file_set "$ENV_FILE" NATS_MONITOR_URL "http://127.0.0.1:$MONITOR_PORT"
log "nats-server $("$NATS_SERVER" --version | awk '{print $NF}') ready: $URL (pid $PID, JetStream store $NATS_DIR/store)"
echo "NATS_URL=$URL"
echo "NATS_MONITOR_URL=http://127.0.0.1:$MONITOR_PORT"
