#!/usr/bin/env bash
# `npm test`: type-check, start PostgreSQL + nats-server on loopback, run the tap suite against
# TEST_DB=postgres and then TEST_DB=pglite, stop the services, and end with the plain line
# `N passed, N failed[, N skipped]` summed over both runs.
# Usage: test.sh [tap args...]   e.g. test.sh test/deployment/services.test.ts
#   TEST_DBS="postgres pglite" (default) chooses the runs; SKIP_TYPECHECK=1 skips tsc (local
#   iteration only: .ci/run clears both).
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

read -r -a DBS <<< "${TEST_DBS:-postgres pglite}"
for db in "${DBS[@]}"; do
  [[ "$db" == postgres || "$db" == pglite ]] || die "TEST_DBS: unknown database '$db'"
done

[ -d node_modules ] || npm ci --no-audit --no-fund
# The README's session (test/docs/readme.test.ts) is run as written, with curl.
command -v curl >/dev/null || apt_install curl
# The live route page is tested in a real headless Chromium (Debian's, driven by playwright-core).
command -v chromium >/dev/null || apt_install chromium
# Live links are made through a real nginx with infra/proxy/nginx.conf (test/http/public-url.test.ts).
command -v nginx >/dev/null || apt_install nginx
# Labels are read back with poppler's pdftotext (test/shipments/labels/scripts-pdf.test.ts).
command -v pdftotext >/dev/null || apt_install poppler-utils

if [ "${SKIP_TYPECHECK:-}" = 1 ]; then
  log "SKIP_TYPECHECK=1: tsc --noEmit skipped"
else
  log "tsc --noEmit"
  if ! npx tsc --noEmit; then
    echo "typecheck failed: tests not run" >&2
    exit 1
  fi
fi

# One run dir per test.sh process, so that concurrent runs in one tree do not collide.
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

bash "$INFRA_LOCAL_DIR/start-postgres.sh" "$RUN_DIR" >/dev/null
bash "$INFRA_LOCAL_DIR/start-nats.sh" "$RUN_DIR" >/dev/null
# shellcheck source=/dev/null
source "$RUN_DIR/env"
export TEST_DATABASE_URL="$DATABASE_URL" NATS_URL NATS_MONITOR_URL

# Streams file results, failed assertions with their diagnostics, and tap's count line.
show_progress() {
  awk '
    function indent(s) { match(s, /^ */); return RLENGTH }
    yaml { print; if ($0 ~ /^ *\.\.\.$/ && indent($0) == yind) yaml = 0; next }
    pending { pending = 0; if ($0 ~ /^ *---$/ && indent($0) == yind) { yaml = 1; print; next } }
    /^(ok|not ok) / || /^# \{/ { print; fflush(); next }
    /^ +not ok / { print; pending = 1; yind = indent($0) + 2; fflush(); next }
  '
}

# .taprc turns tap's TypeScript plugin off (tsx runs the files), which also drops .ts from tap's
# default file patterns: the suite's files are named here. File arguments take precedence.
# What the PGlite pass leaves out (docs/decisions.md): test/outages restarts its own PostgreSQL
# servers and NATS nodes (a server engine only); the rest test what no engine changes (the OpenAPI
# document, CORS, log redaction, links through nginx, tracing, pages in Chromium, the solver's CLI)
# and run once, in the PostgreSQL pass. Patterns match as bash globs (`*` crosses `/`).
PGLITE_LEAVES_OUT=(
  'test/outages/*'
  test/http/openapi-document.test.ts
  test/http/openapi-operations.test.ts
  test/http/plugins/cors.test.ts
  test/http/log-redaction.test.ts
  test/http/public-url.test.ts
  test/infrastructure/tracing/trace.test.ts
  test/http/docs/docs-offline-browser.test.ts
  test/routes/progress/live-page-browser.test.ts
  test/planning/vrptw-cli.test.ts
)
left_out() {
  local pattern
  for pattern in "${PGLITE_LEAVES_OUT[@]}"; do
    # shellcheck disable=SC2053
    [[ "$1" == $pattern ]] && return 0
  done
  return 1
}

declare -A RUN_RC=()
RUN_DBS=()
for db in "${DBS[@]}"; do
  PASS_ARGS=("${TAP_ARGS[@]}")
  EXCLUDE=()
  if [ "$db" = pglite ]; then
    # Named files: those left out are dropped here (tap would find nothing and fail the pass).
    named=0; kept=0; PASS_ARGS=()
    for arg in "${TAP_ARGS[@]}"; do
      if [[ "$arg" != -* ]]; then
        named=$((named + 1))
        left_out "$arg" && continue
        kept=$((kept + 1))
      fi
      PASS_ARGS+=("$arg")
    done
    if [ "$named" -gt 0 ] && [ "$kept" = 0 ]; then
      log "TEST_DB=pglite: every named file runs in the PostgreSQL pass only; pass not run"
      continue
    fi
    # tap's own default excludes, which an --exclude replaces, come first.
    EXCLUDE=(--exclude='**/{dist,fixture,fixtures}/**')
    for pattern in "${PGLITE_LEAVES_OUT[@]}"; do EXCLUDE+=(--exclude="${pattern/%\/\*//**}"); done
  fi
  RUN_DBS+=("$db")
  log "tap with TEST_DB=$db"
  tap_log="$RUN_DIR/tap-$db.log"
  set +e
  TEST_DB="$db" npx tap --reporter=tap --include='test/**/*.test.ts' "${EXCLUDE[@]}" "${PASS_ARGS[@]}" \
    2> "$RUN_DIR/tap-$db.stderr" | tee "$tap_log" | show_progress
  RUN_RC[$db]=${PIPESTATUS[0]}
  set -e
  cp "$tap_log" ".local/logs/tap-$db.log"
  cp "$RUN_DIR/tap-$db.stderr" ".local/logs/tap-$db.stderr.log"
  if [ "${RUN_RC[$db]}" != 0 ]; then
    echo "--- TEST_DB=$db: tap exited ${RUN_RC[$db]} (TAP: .local/logs/tap-$db.log)"
    stderr_tail="$(grep -Ev 'Unknown (user|env) config "nodedir"' "$RUN_DIR/tap-$db.stderr" | tail -n 40)" || true
    [ -z "$stderr_tail" ] || printf -- '--- its stderr, last lines (all: .local/logs/tap-%s.stderr.log):\n%s\n' \
      "$db" "$stderr_tail"
  fi
done

# tap ends with `# { total: N, pass: N, fail: N, skip: N, todo: N }` (zero counts left out).
# A run without that line (tap crashed or found no file) counts its top-level `not ok` lines.
args=()
for db in "${RUN_DBS[@]}"; do args+=("$db" "${RUN_RC[$db]}" "$RUN_DIR/tap-$db.log"); done
set +e
summary="$(node - "${args[@]}" <<'EOF'
const { readFileSync } = require('node:fs')
const argv = process.argv.slice(2)
const sum = { pass: 0, fail: 0, skip: 0 }
let ok = true
for (let i = 0; i < argv.length; i += 3) {
  const [db, rc, file] = argv.slice(i, i + 3)
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
  console.log(`TEST_DB=${db}: pass ${n.pass}, fail ${n.fail}, skip ${skipped}` +
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
