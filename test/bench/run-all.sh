#!/usr/bin/env bash
# Runs every benchmark against a throwaway PostgreSQL and nats-server on loopback and keeps each
# one's output in .local/bench/<name>.txt. Usage: bash test/bench/run-all.sh [name ...]
#   e.g. bash test/bench/run-all.sh shipments http
# Named only explicitly, since it takes long: growth (GROWTH_SIZES=10000,100000,1000000 by default;
# up to GROWTH_TIMEOUT seconds, 4 hours by default, where the others have 900). PG_SHARED_BUFFERS=4GB
# gives the server the cache the README's "Running in production" sizes for 1M shipments.
# Figures are only comparable within one run: each bench measures its own baseline beside it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
state="$(mktemp -d /tmp/shipping-bench.XXXXXX)"
trap 'bash infra/local/stop.sh "$state" >/dev/null 2>&1 || true; rm -rf "$state"' EXIT
bash infra/local/start-postgres.sh "$state" >/dev/null
bash infra/local/start-nats.sh "$state" >/dev/null
set -a; source "$state/env"; set +a
# The benches name the server in three ways; give them all the same one.
export BENCH_DATABASE_URL="$DATABASE_URL" TEST_DATABASE_URL="$DATABASE_URL" TEST_DB=postgres
mkdir -p .local/bench
# The platform server runs compiled, as deployed (bench-server.ts: platformServerArgs);
# BENCH_DIST=0 runs the TypeScript sources through tsx instead.
export BENCH_DIST="${BENCH_DIST:-1}"
[ "$BENCH_DIST" != 1 ] || npm run --silent build
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(event-store projections rebuild http shipments embedded-start tasks bus quotes webhooks org-webhooks carrier-feed gazetteer workflow-steps vs-emmett tracking-page driver-app lateness eta-accuracy eta-freshness eta-cost db-outage rolling-restart nats-failover)
for name in "${names[@]}"; do
  echo "== $name"
  limit=900; [ "$name" != growth ] || limit="${GROWTH_TIMEOUT:-14400}"
  timeout "$limit" node --expose-gc --import tsx "test/bench/$name.bench.ts" 2>&1 | tee ".local/bench/$name.txt" || echo "(exit $?)"
done
# The page streams of issue 24 (test/bench/page-streams.bench.ts) close the default run.
if [ "$#" -eq 0 ]; then
  echo "== page-streams"
  timeout 900 node --expose-gc --import tsx test/bench/page-streams.bench.ts 2>&1 | tee .local/bench/page-streams.txt || echo "(exit $?)"
fi
