// Shipments benchmark (issue 4 §9), against a real PostgreSQL server:
//  1. baseline: pgbench, single-row autocommit INSERT of an event-shaped row (jsonb data and
//     metadata, like es_events) on the same server in the same run;
//  2. POST /api/v1/shipments sustained throughput under autocannon (goal ≥ 0.25× of 1): the
//     requests of the measured seconds over those seconds plus the time the projections, the relay
//     and the reactions take to catch up with them (read from /metrics); then p50/p99 at half that
//     rate (goal p99 ≤ 30 ms) with evenly spaced arrivals (open-loop.ts says why autocannon's
//     overallRate is not used for that; its figure is printed too);
//  3. GET /api/v1/shipments/{id} vs a bare Fastify hello-world in the same run (goal ≥ 0.5×).
//
//   bash infra/local/start-postgres.sh /tmp/benchpg && source /tmp/benchpg/env
//   npx tsx test/bench/shipments.bench.ts
//
//   DATABASE_URL       PostgreSQL admin URL (required): scratch databases are created and dropped
//   BENCH_SECONDS=10   measured seconds per target (after BENCH_WARMUP=3 s)
//   BENCH_CONNECTIONS=50
//   BENCH_PGBENCH_CLIENTS=8
// The server is a child process (bench-server.ts: platformServerArgs, compiled under run-all.sh), logs to a file. Not a tap test.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { freePort, HELLO, platformEnv, platformServerArgs, platformServerKind, startProcess as startServer, contractedPair } from './bench-server.js'
import pg from 'pg'
import { scratchDatabase } from './bench-database.js'
import { openLoop } from './open-loop.js'
import { CONNECTIONS, drained, f0, type Figures, line, load, SECONDS, WARMUP } from './http-load.js'
import { rssMb, rssWatch, treeRssMb } from './bench-report.js'

const PGBENCH_CLIENTS = Number(process.env['BENCH_PGBENCH_CLIENTS'] ?? 8)
const ADMIN_TOKEN = `adm_bench_${randomBytes(8).toString('hex')}`
const work = mkdtempSync(join(tmpdir(), 'shipments-bench-'))
// As root, the embedded PostgreSQL's user (postgres) must reach DATA_DIR inside it (mkdtemp makes it 0700).
chmodSync(work, 0o755)


const startProcess = (label: string, args: string[], env: NodeJS.ProcessEnv, port: number) => startServer(work, label, args, env, port)


/** pgbench: one event-shaped row per transaction (autocommit), PGBENCH_CLIENTS clients. */
function pgbenchInsert(url: string): number {
  const u = new URL(url)
  const script = join(work, 'insert.sql')
  writeFileSync(script, `insert into bench_events (stream_id, stream_version, event_id, type, data, metadata)
values ('shipment-' || (random() * 1e12)::bigint, 1, gen_random_uuid(), 'ShipmentCreated',
 '{"id": 1, "ulid": "01JBENCH", "control_number": "ABCDE", "packages": [{"grams": 1000, "length": 10}], "origin": {"name": "Ana", "street": "Av. Colón"}}'::jsonb,
 '{"actor": {"kind": "organization", "id": "org_bench"}, "request_id": "r1", "schema_version": 1}'::jsonb);
`)
  const env = { ...process.env, PGPASSWORD: decodeURIComponent(u.password) }
  const args = ['-h', u.hostname, '-p', u.port || '5432', '-U', decodeURIComponent(u.username) || 'postgres', '-n', '-f', script,
    '-c', String(PGBENCH_CLIENTS), '-j', String(Math.min(PGBENCH_CLIENTS, 2)), '-T', String(SECONDS), u.pathname.slice(1)]
  const r = spawnSync('pgbench', args, { env, encoding: 'utf8' })
  const m = /tps = ([\d.]+)/.exec(r.stdout)
  if (!m) throw new Error(`pgbench failed: ${r.stdout}\n${r.stderr}`)
  return Number(m[1])
}

async function createBenchTable(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  await c.query(`create table bench_events (
    global_position bigint generated always as identity primary key,
    transaction_id xid8 not null default pg_current_xact_id(),
    stream_id text not null, stream_version int not null, event_id uuid not null unique, type text not null,
    data jsonb not null, metadata jsonb not null, recorded_at timestamptz not null default now(),
    unique (stream_id, stream_version))`)
  await c.query('create index on bench_events (transaction_id, global_position)')
  await c.end()
}

const SHIPMENT = (carrierId: string) => JSON.stringify({
  carrier_id: carrierId,
  external_reference: 'BENCH-1',
  origin: { name: 'Depot', street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR', phone: '+54 351 422 1234' },
  destination: { name: 'Ana Gómez', street: 'San Martín', street_number: '50', city: 'Rosario', state: 'Santa Fe', country: 'AR' },
  packages: [
    { original_weight: 2.5, weight_unit: 'kg', length: 30, width: 20, height: 10 },
    { grams: 800, original_length: 12, length_unit: 'in', width: 15, height: 15 },
  ],
})

async function main(): Promise<void> {
  if (!process.env['DATABASE_URL']) {
    console.log('DATABASE_URL not set: bash infra/local/start-postgres.sh /tmp/benchpg && source /tmp/benchpg/env')
    process.exit(2)
  }
  console.log(`autocannon: ${CONNECTIONS} connections, ${WARMUP} s warm-up + ${SECONDS} s measured; pgbench: ${PGBENCH_CLIENTS} clients, ${SECONDS} s; platform ${platformServerKind()}`)

  const baseDb = await scratchDatabase('pgbench')
  let insertTps: number
  try {
    await createBenchTable(baseDb.url)
    insertTps = pgbenchInsert(baseDb.url)
  } finally { await baseDb.drop() }
  console.log(`${'pgbench single-row INSERT (event-shaped row)'.padEnd(46)} ${f0(insertTps).padStart(7)} tx/s`)

  const helloPort = await freePort()
  const hello = await startProcess('hello', ['--input-type=module', '-e', HELLO], { PORT: String(helloPort) }, helloPort)
  let helloFigures: Figures
  try { helloFigures = await load({ url: `http://127.0.0.1:${helloPort}/` }) } finally { await hello.stop() }
  console.log(line('bare Fastify hello-world', helloFigures))

  const db = await scratchDatabase('shipments')
  const port = await freePort()
  const server = await startProcess('platform', platformServerArgs(), platformEnv({ port, adminToken: ADMIN_TOKEN, dataDir: join(work, 'data'), databaseUrl: db.url }), port)
  try {
    const base = `http://127.0.0.1:${port}`
    const { carrier, shipper } = await contractedPair(base, ADMIN_TOKEN)
    const headers = { authorization: `Bearer ${shipper.access_token}`, 'content-type': 'application/json' }
    const body = SHIPMENT(carrier.organization.id)
    const first = await fetch(`${base}/api/v1/shipments`, { method: 'POST', headers, body })
    if (first.status !== 201) throw new Error(`POST /shipments: ${first.status} ${await first.text()}`)
    const id = ((await first.json()) as any).shipment.id

    const postOpts = { url: `${base}/api/v1/shipments`, method: 'POST' as const, headers, body }
    // The server's memory under POST load, and whether it grows with time: idle, the peak of each
    // round, and what stays once the background has caught up (issue 31).
    const pid = server.child.pid!
    const memory = rssWatch(pid)
    const rssIdle = rssMb(pid)
    await autocannon({ ...postOpts, connections: CONNECTIONS, duration: WARMUP })
    await drained(base)
    const post = await load(postOpts, false)
    // Sustained: the measured requests over the time until the relay, the reactions and the
    // projections have caught up with them too.
    const drainMs = await drained(base)
    const sustained = (post.rps * SECONDS) / (SECONDS + drainMs / 1000)
    console.log(line('POST /shipments, peak', post))
    console.log(`${'  background caught up after the peak in'.padEnd(46)} ${f0(drainMs).padStart(7)} ms: sustained ${f0(sustained)} req/s`)
    const rounds = [`idle ${f0(rssIdle)} MB`, `peak ${f0(memory.peak())} MB, settled ${f0(rssMb(pid))} MB`]
    for (let round = 2; round <= Number(process.env['BENCH_RSS_ROUNDS'] ?? 3); round++) {
      memory.reset()
      await load(postOpts, false)
      await drained(base)
      rounds.push(`round ${round}: peak ${f0(memory.peak())} MB, settled ${f0(rssMb(pid))} MB`)
    }
    memory.stop()
    console.log(`${'server RSS under POST /shipments'.padEnd(46)} ${rounds.join('; ')}`)
    const halfRate = Math.max(1, Math.floor(sustained / 2))
    await drained(base)
    const atHalf = await openLoop({ url: `${base}/api/v1/shipments`, method: 'POST', headers, body, rate: halfRate, seconds: SECONDS })
    console.log(`${`POST /shipments at half the peak (${f0(halfRate)}/s, even)`.padEnd(46)} ${f0(atHalf.rps).padStart(7)} req/s  p50 ${atHalf.p50} ms  p90 ${atHalf.p90} ms  p99 ${atHalf.p99} ms  max ${atHalf.max} ms` +
      (atHalf.non2xx || atHalf.errors ? `  (non-2xx ${atHalf.non2xx}, errors ${atHalf.errors})` : ''))
    const bursty = await load({ url: `${base}/api/v1/shipments`, method: 'POST', headers, body, overallRate: halfRate }, false)
    console.log(line(`  same rate, autocannon overallRate (bursts)`, bursty))
    await drained(base)
    const get = await load({ url: `${base}/api/v1/shipments/${id}`, headers: { authorization: headers.authorization } })
    console.log(line('GET /shipments/{id}', get))
    // The platform's floor on this machine: an authenticated GET that reads one small row.
    const my = await load({ url: `${base}/api/v1/organizations/my`, headers: { authorization: headers.authorization } })
    console.log(line('GET /organizations/my (reference)', my))

    const ratioPost = sustained / insertTps
    const ratioGet = get.rps / helloFigures.rps
    console.log('')
    console.log(`POST /shipments (sustained) vs pgbench INSERT: ${ratioPost.toFixed(2)}× (goal ≥ 0.25×: ${ratioPost >= 0.25 ? 'met' : 'NOT met'})`)
    console.log(`POST /shipments p99 at half the peak: ${atHalf.p99} ms (goal ≤ 30 ms: ${atHalf.p99 <= 30 ? 'met' : 'NOT met'})`)
    console.log(`GET /shipments/{id} vs hello-world: ${ratioGet.toFixed(2)}× (goal ≥ 0.5×: ${ratioGet >= 0.5 ? 'met' : 'NOT met'})`)
  } finally {
    await server.stop()
    await db.drop()
  }

  // The same POST /shipments on the embedded default: PostgreSQL from npm under DATA_DIR and the
  // in-process bus, nothing configured; then GET /shipments/{id} and /organizations/my against the
  // hello-world above, and the server's and its PostgreSQL's memory.
  if (process.env['BENCH_EMBEDDED'] !== '0') {
    const ePort = await freePort()
    const embedded = await startProcess('embedded', platformServerArgs(),
      { ...platformEnv({ port: ePort, adminToken: ADMIN_TOKEN, dataDir: join(work, 'embedded'), databaseUrl: '' }), NATS_URL: '' }, ePort)
    try {
      const base = `http://127.0.0.1:${ePort}`
      const { carrier, shipper } = await contractedPair(base, ADMIN_TOKEN)
      const headers = { authorization: `Bearer ${shipper.access_token}`, 'content-type': 'application/json' }
      const postOpts = { url: `${base}/api/v1/shipments`, method: 'POST' as const, headers, body: SHIPMENT(carrier.organization.id) }
      await autocannon({ ...postOpts, connections: CONNECTIONS, duration: WARMUP })
      await drained(base)
      const post = await load(postOpts, false)
      const drainMs = await drained(base)
      console.log(line('POST /shipments, embedded default, peak', post))
      console.log(`${'  background caught up after the peak in'.padEnd(46)} ${f0(drainMs).padStart(7)} ms: sustained ${f0((post.rps * SECONDS) / (SECONDS + drainMs / 1000))} req/s`)
      const created = await fetch(`${base}/api/v1/shipments`, { method: 'POST', headers, body: SHIPMENT(carrier.organization.id) })
      const id = ((await created.json()) as { shipment: { id: number } }).shipment.id
      const get = await load({ url: `${base}/api/v1/shipments/${id}`, headers: { authorization: headers.authorization } })
      console.log(line('GET /shipments/{id}, embedded default', get))
      const my = await load({ url: `${base}/api/v1/organizations/my`, headers: { authorization: headers.authorization } })
      console.log(line('GET /organizations/my, embedded default', my))
      console.log(`embedded default vs hello-world: GET /shipments/{id} ${(get.rps / helloFigures.rps).toFixed(2)}×, GET /organizations/my ${(my.rps / helloFigures.rps).toFixed(2)}× (goal ≥ 0.5×)`)
      console.log(`embedded default, server + its PostgreSQL RSS after the loads: ${f0(treeRssMb(embedded.child.pid!))} MB`)
    } finally {
      await embedded.stop()
    }
  }
  rmSync(work, { recursive: true, force: true })
}

await main()
