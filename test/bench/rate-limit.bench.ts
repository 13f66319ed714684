// What the shared rate limit adds to an authenticated GET on PostgreSQL: one upsert round trip.
// Run: bash test/bench/run-all.sh rate-limit (or TEST_DB=postgres TEST_DATABASE_URL=postgres://… npx tsx
// test/bench/rate-limit.bench.ts). BENCH_REQUESTS=3000. Two apps in this process on one database,
// one limited and one not, take turns request by request, so both see the same load.
import { sql } from 'kysely'
import { buildApp } from '../../src/http/app.js'
import { modules } from '../../src/modules.js'
import { createPlatform } from '../../src/platform.js'
import { build } from '../helpers/build.js'

const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 3000)
const teardowns: (() => unknown)[] = []
const t = { teardown: (fn: () => unknown) => { teardowns.push(fn) } }
const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! }
const line = (name: string, xs: number[]) => `${name.padEnd(34)} p50 ${pct(xs, 50).toFixed(3)} ms  p90 ${pct(xs, 90).toFixed(3)} ms  p99 ${pct(xs, 99).toFixed(3)} ms`

async function main() {
  const limited = await build(t, { rateLimitPerMinute: 100_000_000 })
  const free = await createPlatform({ ...limited.platform.config, rateLimitPerMinute: 0 }, { database: limited.platform.database, startProjections: false })
  const freeApp = await buildApp(free, { logger: false, modules })
  t.teardown(async () => { await freeApp.close(); await free.close() })
  const org = await limited.createOrganization()
  const headers = { authorization: `Bearer ${org.token}` }
  const get = (app: typeof freeApp) => async () => {
    const s = performance.now()
    const r = await app.inject({ method: 'GET', url: '/api/v1/organizations/my', headers })
    if (r.statusCode !== 200) throw new Error(`${r.statusCode} ${r.body}`)
    return performance.now() - s
  }
  const limiter = limited.platform.rateLimiter
  const take = async () => { const s = performance.now(); await limiter.take('tok_bench', 100_000_000, new Date()); return performance.now() - s }
  const select1 = async () => { const s = performance.now(); await sql`select 1`.execute(limited.platform.db); return performance.now() - s }

  const runs = { 'GET, limited': get(limited.app), 'GET, not limited': get(freeApp), 'limiter.take alone': take, 'select 1 (a bare round trip)': select1 }
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(runs).map((k) => [k, []]))
  for (let i = 0; i < 200; i++) for (const f of Object.values(runs)) await f()
  for (let i = 0; i < REQUESTS; i++) for (const [k, f] of Object.entries(runs)) times[k]!.push(await f())
  console.log(`rate limit on ${limited.platform.database.kind} (${limiter.kind}), ${REQUESTS} each, interleaved`)
  for (const [k, xs] of Object.entries(times)) console.log(line(k, xs))
}

main().then(async () => { for (const f of teardowns.reverse()) await f() }, (err) => { console.error(err); process.exit(1) })
