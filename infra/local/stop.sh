#!/usr/bin/env bash
# Stops the PostgreSQL and nats-server started by start-postgres.sh / start-nats.sh and removes
# their data. Idempotent.
# Usage: stop.sh [state-dir...]
#   With no argument: <repo>/.local, plus the run dirs of test.sh runs that are no longer alive.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

stop_state_dir() {
  local state="$1"
  [ -d "$state" ] || return 0
  stop_postgres "$state"
  stop_nats "$state"
  rm -f "$state/env"
}

if [ "$#" = 0 ]; then
  stop_state_dir "$REPO_ROOT/.local"
  sweep_stale_runs
else
  for dir in "$@"; do stop_state_dir "$(cd "$dir" 2>/dev/null && pwd || echo "$dir")"; done
fi
