// A PostgreSQL restart under load (issue 33, point 1): two API processes on a PostgreSQL server and
// a nats-server of this test's own, shipments created through both with Idempotency-Keys and
// retried on 503, while the server restarts with `pg_ctl restart -m fast` and then `-m immediate`.
// No process may exit; the outage answers 503 with Retry-After (never a 500, never a hang); once
// the server is back, writes succeed again, every acknowledged shipment exists exactly once, and
// the relay, the bus consumers and the projector carry on (each shipment gets its one workflow).
// How fast it recovers is a figure: test/bench/db-outage.bench.ts.
import t from 'tap'
import pg from 'pg'
import { startPostgresServer } from '../helpers/postgres-server.js'
import { natsServerBinary, startNatsServer } from '../helpers/nats-server.js'
import { deployment, relayOwner, until as untilFor, workflowsOf } from '../processes/fixtures/two-api-processes.js'
import { startShipmentLoad } from './fixtures/shipment-load.js'
import type { ApiProcess } from '../helpers/api-process.js'

t.test('pg_ctl restart -m fast, then -m immediate, under load through two API processes', { timeout: 120_000, skip: natsServerBinary() ? false : 'nats-server is not installed' }, async (t) => {
  const started = Date.now()
  const phase = (what: string) => t.comment(`${((Date.now() - started) / 1000).toFixed(1)} s: ${what}`)
  const [server, nats] = await Promise.all([startPostgresServer(), startNatsServer()])
  phase('servers up')
  t.teardown(() => server.destroy())
  t.teardown(() => nats.destroy())
  const d = deployment({ databaseUrl: server.url, natsUrl: nats.url }, (fn) => t.teardown(fn))
  t.teardown(() => d.close())
  // Short bounds, so that nothing the outage holds up outlasts the test's patience.
  Object.assign(d.env, { DATABASE_CONNECT_TIMEOUT_MS: '2000', PROJECTION_WAIT_MS: '2000' })
  // Started together: the migrations take kysely's migration lock, the second waits for the first.
  const [a, b] = await Promise.all([d.start(), d.start()])
  const processes: ApiProcess[] = [a, b]
  phase('API processes up')
  const exits: string[] = []
  for (const [i, p] of processes.entries()) void p.exited.then((code) => exits.push(`process ${i + 1} exited ${code}:\n${p.output().slice(-3000)}`))
  // Waits that end at once, with the reason, when a process has exited.
  const until = <T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs?: number) => untilFor(what, async () => {
    if (exits.length) throw new Error(`${what}: ${exits.join('\n')}`)
    return check()
  }, timeoutMs)

  const { shipperToken, carrierToken, carrierId } = await d.setup(a)
  await until('a relay owner', () => relayOwner(processes))
  const load = startShipmentLoad(processes, shipperToken, carrierId, { clients: 6, requestTimeoutMs: 10_000 })
  t.teardown(() => load.stop())
  await until('writes under way', async () => load.acks.length >= 10)
  phase(`load under way (${load.acks.length})`)

  for (const mode of ['fast', 'immediate'] as const) {
    phase(`${mode} restart`)
    const back = await server.restart(mode)
    phase(`${mode} restart: server back`)
    const first = await until(`a write acknowledged after the ${mode} restart`, async () => load.acks.find((x) => x.at > back), 20_000)
    t.pass(`${mode} restart: first 201 ${first.at - back} ms after the server answered again`)
    const count = load.acks.length
    await until('more writes after it', async () => load.acks.length >= count + 10, 20_000)
  }
  await load.stop()
  phase(`load stopped (${load.acks.length})`)

  t.same(exits, [], 'no API process exited')
  const byStatus = new Map<string, number>()
  for (const r of load.refusals) byStatus.set(`${r.status} ${r.code ?? ''}`.trim(), (byStatus.get(`${r.status} ${r.code ?? ''}`.trim()) ?? 0) + 1)
  t.comment(`refusals: ${JSON.stringify(Object.fromEntries(byStatus))}; acknowledged: ${load.acks.length}`)
  t.ok(load.refusals.some((r) => r.status === 503), 'the outage was seen (503s)')
  const wrong = load.refusals.filter((r) => !(r.status === 503 && r.retryAfter && /^\d+$/.test(r.retryAfter))
    && !(r.status === 409 && r.code === 'idempotency_in_progress'))
  t.same(wrong, [], 'every refusal was a 503 with Retry-After (or a 409 for a key whose first try was still being settled): no 500, none hung, no connection refused')
  t.same(load.unsettled, [], 'every shipment sent was acknowledged in the end')

  // Nothing acknowledged lost, nothing created twice: one ShipmentCreated per key, the ids acknowledged.
  const ids = new Map<string, number>()
  for (const ack of load.acks) {
    if (ids.has(ack.key)) t.equal(ack.id, ids.get(ack.key), `a replay of key ${ack.key} answers the same shipment`)
    ids.set(ack.key, ack.id)
  }
  const acknowledged = [...new Set(ids.values())].sort((x, y) => x - y)
  t.equal(acknowledged.length, ids.size, 'each key its own shipment')
  const db = new pg.Client({ connectionString: server.url })
  await db.connect()
  t.teardown(() => db.end())
  const created = await db.query<{ id: number }>(`select (data->>'id')::int as id from es_events where type = 'ShipmentCreated' order by 1`)
  t.same(created.rows.map((r) => r.id), acknowledged, 'the log holds exactly the acknowledged shipments, each once')

  // The projector, the relay and the bus consumers resumed: every shipment can be read, and has its one workflow.
  for (const p of processes) await until(`/ready of ${p.url}`, async () => (await fetch(`${p.url}/ready`)).status === 200, 15_000)
  const get = (id: number) => fetch(`${a.url}/api/v1/shipments/${id}`, { headers: { authorization: `Bearer ${shipperToken}` } }).then((r) => r.status)
  t.same((await Promise.all(acknowledged.map(get))).filter((s) => s !== 200), [], 'every acknowledged shipment is in the read model')
  await until('a workflow for every acknowledged shipment', async () => {
    const counts = await Promise.all(acknowledged.map((id) => workflowsOf(b, carrierToken, id)))
    return counts.every((c) => c >= 1) ? counts : undefined
  }, 30_000).then((counts) => t.ok(counts.every((c) => c === 1), `each of ${acknowledged.length} shipments has exactly one workflow`))
  t.same(exits, [], 'still no API process exited')
})
