// Rolling restart (issue 33 point 4): two API processes (src/main.ts through tsx) behind the
// repository's nginx (infra/proxy/nginx.conf) on one PostgreSQL database and one NATS stream,
// under steady load (writers POST shipments with an Idempotency-Key, readers GET them, a few event
// streams open); each process in turn gets SIGTERM, is waited for and started again. Prints the
// 5xx and failed requests the clients saw (goal 0), the requests served, the slowest answer during
// each restart, how long each process took to exit after SIGTERM, and how long until the other
// one held the relay lease.
//   bash test/bench/run-all.sh rolling-restart     (or DATABASE_URL=… NATS_URL=… npx tsx test/bench/rolling-restart.bench.ts)
import pg from 'pg'
import { startNginx } from '../helpers/nginx.js'
import {
  answered, holdsRelay, Load, rollingDeployment, StreamClients, streamUrls, terminate, until, type Member,
} from '../outages/fixtures/rolling-deployment.js'
import { scratchDatabase } from './bench-database.js'

const natsUrl = process.env['NATS_URL']
if (!natsUrl) { process.stderr.write('NATS_URL is not set (bash test/bench/run-all.sh rolling-restart sets it)\n'); process.exit(2) }
const WRITERS = Number(process.env['BENCH_WRITERS'] ?? 4)
const READERS = Number(process.env['BENCH_READERS'] ?? 4)
const STREAMS = Number(process.env['BENCH_STREAMS'] ?? 20)

const teardowns: (() => unknown)[] = []
const teardown = (fn: () => unknown) => { teardowns.push(fn) }
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`

async function main() {
  const db = await scratchDatabase('rolling')
  teardown(() => db.drop())
  const { d, members: [a, b] } = await rollingDeployment({ databaseUrl: db.url, natsUrl: natsUrl! }, teardown)
  if (!a || !b) throw new Error('two processes')
  const tokens = await d.setup(a.current)
  const client = new pg.Client({ connectionString: db.url })
  await client.connect()
  teardown(() => client.end())
  /** The relay lease's owner id, by the database (what /ready's relay_here says, without /ready's other checks). */
  const relayOwner = async () => (await client.query<{ owner: string | null }>(`select owner from bus_relay_checkpoints where name = 'main'`)).rows[0]?.owner ?? null
  const proxy = await startNginx({ teardown }, [a.port, b.port])
  const base = `http://127.0.0.1:${proxy.port}`
  const streams = new StreamClients(await streamUrls(base, tokens, STREAMS))
  teardown(() => streams.stop())
  await streams.opened(STREAMS)
  console.log(`rolling restart: two API processes (tsx) behind nginx on PostgreSQL + NATS; ${WRITERS} writers (POST /shipments with Idempotency-Key), ${READERS} readers, ${STREAMS} event streams; each worker pauses 10 ms between requests`)
  const load = new Load(base, tokens, { writers: WRITERS, readers: READERS, pauseMs: 10 })
  teardown(() => load.stop())
  await until('traffic through both processes', async () => answered(a.current) > 50 && answered(b.current) > 50, 60_000)
  const steadyFrom = Date.now()
  await new Promise((r) => setTimeout(r, 3000))
  const steadyMax = load.maxLatency(steadyFrom, Date.now())

  const first = await until('a relay holder', async () => ((await holdsRelay(a.current)) ? a : (await holdsRelay(b.current)) ? b : undefined))
  const order: Member[] = first === a ? [a, b] : [b, a]
  const lines: string[] = []
  for (const [i, p] of order.entries()) {
    const other = order[1 - i]!
    const owner = await relayOwner()
    const from = Date.now()
    const relayMoved = until(`${other.name} to hold the relay`, async () => { const o = await relayOwner(); return o !== null && o !== owner }, 30_000, 5)
      .then(() => Date.now() - from)
    const { code, ms } = await terminate(p.current, 30_000)
    const relayMs = await relayMoved
    if (!(await holdsRelay(other.current))) throw new Error(`the relay moved, but not to ${other.name}`)
    await p.start()
    const seen = answered(p.current)
    await until(`the proxy to send to ${p.name} again`, async () => answered(p.current) > seen + 5, 60_000, 100)
    lines.push(`${p.name} (held the relay): exit code ${code} ${s(ms)} after SIGTERM; ${other.name} held the relay lease ${s(relayMs)} after it; `
      + `slowest answer from SIGTERM to ${p.name} serving again ${s(load.maxLatency(from, Date.now()))}`)
  }
  await load.stop()
  await streams.stop()
  const failures = load.failures()
  const byStatus = new Map<string, number>()
  for (const f of failures) byStatus.set(String(f.status), (byStatus.get(String(f.status)) ?? 0) + 1)
  for (const l of lines) console.log(l)
  console.log(`requests served ${load.outcomes.length - failures.length} of ${load.outcomes.length}; 5xx or failed: ${failures.length}`
    + (failures.length ? ` (${[...byStatus].map(([k, n]) => `${k}: ${n}`).join(', ')})` : ' (goal 0)'))
  console.log(`shipments acknowledged ${load.acknowledged.size}; slowest answer in 3 s of steady load before the restart ${s(steadyMax)}`)
  console.log(`event streams ended by a draining process with a retry: hint ${streams.endedWithRetry}, without one ${streams.endedWithout}; reconnections refused ${streams.failed.length}`)
}

main().catch((err) => { console.error(err); process.exitCode = 1 }).finally(async () => {
  for (const fn of teardowns.reverse()) await Promise.resolve(fn()).catch(() => undefined)
})
