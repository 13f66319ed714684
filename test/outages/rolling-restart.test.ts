// Rolling restart (issue 33 point 4): SIGTERM drains an API process (src/main.ts): it stops
// accepting, finishes what is in flight, ends its event streams with a `retry:` hint, and gives its
// leases up at once. Two processes of src/main.ts behind the repository's nginx (infra/proxy/nginx.conf),
// on a PostgreSQL and a nats-server of this file's own, restarted one after the other under load;
// the first also holds 20 streams of its own clients when it is stopped. (The drain itself, in
// process: test/http/drain.test.ts.)
import { readFileSync } from 'node:fs'
import t from 'tap'
import pg from 'pg'
import { startNatsServer } from '../helpers/nats-server.js'
import { startNginx } from '../helpers/nginx.js'
import {
  answered, holdsRelay, Load, ownPostgres, rollingDeployment, StreamClients, streamUrls, terminate, until, type Member,
} from './fixtures/rolling-deployment.js'

const teardown = (fn: () => unknown) => t.teardown(fn)

const [databaseUrl, nats] = await Promise.all([ownPostgres(teardown), startNatsServer()])
t.teardown(() => nats.destroy())
const started = Date.now()
const { d, members: [a, b] } = await rollingDeployment({ databaseUrl, natsUrl: nats.url }, teardown)
if (!a || !b) throw new Error('two processes')
t.comment(`two API processes started in ${Date.now() - started} ms`)
const tokens = await d.setup(a.current)
const db = new pg.Client({ connectionString: databaseUrl })
await db.connect()
t.teardown(() => db.end())

/** The relay lease's holder (its owner id), by the database. */
const relayLease = async () => (await db.query<{ owner: string | null }>(`select owner from bus_relay_checkpoints where name = 'main'`)).rows[0]?.owner ?? null

/** The leases one process at a time holds (relay, notary, ETA engine): holder and expiry (ms), by the database. */
interface Lease { name: string; owner: string | null; until: number }
const leases = async (): Promise<Lease[]> => (await db.query<{ name: string; owner: string | null; until: number | null }>(`
  select 'relay' as name, owner, (extract(epoch from lease_until) * 1000)::float8 as until from bus_relay_checkpoints where name = 'main'
  union all select 'notary', owner, (extract(epoch from lease_until) * 1000)::float8 from audit_notary
  union all select 'eta', owner, (extract(epoch from lease_until) * 1000)::float8 from read_model.eta_checkpoint order by 1`))
  .rows.map((r) => ({ name: r.name, owner: r.owner, until: Number(r.until ?? 0) }))

/**
 * Leases the stopped process held were given up: each lease's holder at the exit is either a new
 * one, or the holder from before, which then renews it (a live process); a lease left to lapse
 * would keep its holder and not be renewed, then move to the other process.
 */
async function leasesHandedOver(before: Lease[], atExit: Lease[]): Promise<string[]> {
  const stuck: string[] = []
  for (const l of atExit) {
    const was = before.find((b) => b.name === l.name)
    if (l.owner === null || l.owner !== was?.owner) continue
    const renewed = await until(`the ${l.name} lease renewed or moved`, async () => {
      const now = (await leases()).find((x) => x.name === l.name)!
      return now.owner === l.owner ? (now.until > l.until ? 'renewed' : undefined) : 'moved'
    }, 5000, 50)
    if (renewed !== 'renewed') stuck.push(l.name)
  }
  return stuck
}

t.test('a rolling restart under load: no 5xx, nothing lost or doubled, the relay moves at once, events keep flowing', async (t) => {
  const proxy = await startNginx(t, [a.port, b.port])
  const base = `http://127.0.0.1:${proxy.port}`
  const clients = new StreamClients(await streamUrls(base, tokens, 6))
  t.teardown(() => clients.stop())
  await clients.opened(6)
  const load = new Load(base, tokens, { writers: 3, readers: 2, pauseMs: 20 })
  t.teardown(() => load.stop())
  await until('traffic through both processes', async () => answered(a.current) > 20 && answered(b.current) > 20, 20_000)

  // The relay's holder first, so that each stop hands it over.
  const first = await until('a relay holder', async () => ((await holdsRelay(a.current)) ? a : (await holdsRelay(b.current)) ? b : undefined))
  const order: Member[] = first === a ? [a, b] : [b, a]
  let last: Promise<unknown> | undefined
  for (const [i, p] of order.entries()) {
    const other = order[1 - i]!
    // The first also holds 20 streams of its own (as many browsers on live and tracking pages).
    const direct = i === 0 ? new StreamClients(await streamUrls(p.current.url, tokens, 20)) : undefined
    if (direct) { t.teardown(() => direct.stop()); await direct.opened(20) }
    const directStreams = [...direct?.open ?? []]
    t.ok(await holdsRelay(p.current), `${p.name} holds the relay before its SIGTERM`)
    const owner = await relayLease()
    const before = await leases()
    const endedBefore = clients.endedWithRetry
    const { code, ms } = await terminate(p.current, 10_000)
    t.equal(code, 0, `${p.name} exits 0, ${ms} ms after SIGTERM`)
    t.ok(ms < (direct ? 2500 : 5000), `${p.name} exited within ${direct ? '2.5' : '5'} s (${ms} ms)${direct ? ' with 20 streams of its own open' : ''}`)
    // Given up, not left to lapse: by the time the process is gone its lease is free or already taken.
    const atExit = await leases()
    t.not(atExit.find((l) => l.name === 'relay')?.owner, owner, `${p.name} released the relay lease before exiting`)
    t.same(await leasesHandedOver(before, atExit), [], `${p.name}'s leases (${before.map((l) => l.name).join(', ')}) were released, none left to lapse`)
    const handover = Date.now()
    await until(`${other.name} to hold the relay`, () => holdsRelay(other.current), 5000)
    t.comment(`${p.name}: exit ${ms} ms after SIGTERM; ${other.name} holds the relay ${Date.now() - handover} ms after that`)
    t.match(p.current.output(), /leases released/, `${p.name} logged its leases released`)
    await until(`${p.name}'s streams to end`, async () => clients.endedWithRetry > endedBefore, 2000)
    if (direct) {
      t.ok(directStreams.every((s) => /\nretry: \d+\n\n$/.test(s.body)), 'each of its 20 streams was ended by the server with a retry: line last')
      await direct.stop()
    }
    const restartedAt = Date.now()
    // Its failure kept as a value until awaited: the last one's start runs beside the checks below.
    const restarted = p.start().then(() => { t.comment(`${p.name}: listening again ${Date.now() - restartedAt} ms after its start`) }, (err: unknown) => err)
    if (i === order.length - 1) { last = restarted; break }
    const failed = await restarted
    if (failed) throw failed
    // Back in the proxy's rotation (nginx stops trying a server for fail_timeout after it refused).
    const seen = answered(p.current)
    await until(`the proxy to send to ${p.name} again`, async () => answered(p.current) > seen + 5, 20_000, 100)
  }
  await load.stop()
  await clients.stop()

  // A POST whose pooled connection closed under it (or that sat in the closing listener's backlog)
  // is sent to the other process by the proxy itself, as it carries an Idempotency-Key
  // (infra/proxy/nginx.conf, @keyed_retry): the client sees none of it.
  const failures = load.failures()
  t.same(failures, [], `no 5xx and no failed request among ${load.outcomes.length}`)
  // What nginx said of them (its error log names the upstream and the failure).
  if (failures.length) t.comment(readFileSync(proxy.errorLog, 'utf8').split('\n').filter((l) => /upstream|refused|reset|closed/.test(l)).slice(-20).join('\n'))
  t.ok(load.acknowledged.size > 20, `${load.acknowledged.size} shipments acknowledged`)
  t.same(clients.failed, [], 'every stream (re)connection through the proxy was answered 200')
  t.equal(clients.endedWithout, 0, 'no stream ended without a retry hint')

  // Every acknowledged shipment exists once, under its Idempotency-Key (kept as external_reference).
  const keys = [...load.acknowledged.keys()]
  const created = await db.query<{ ref: string; n: number }>(
    `select data->>'external_reference' as ref, count(*)::int as n from es_events
     where type = 'ShipmentCreated' and data->>'external_reference' = any($1) group by 1`, [keys])
  t.equal(created.rows.length, keys.length, 'every acknowledged shipment exists')
  t.ok(created.rows.every((r) => r.n === 1), 'each exactly once')
  // Events kept flowing through the relay and the bus: each shipment's workflow (a bus consumer's work).
  const ids = [...load.acknowledged.values()]
  const workflows = async () => (await db.query<{ shipment_id: string; n: number }>(
    `select shipment_id, count(*)::int as n from read_model.workflows where shipment_id = any($1::bigint[]) group by 1`, [ids])).rows
  await until('a workflow for every acknowledged shipment', async () => (await workflows()).length === ids.length, 20_000, 200)
  t.ok((await workflows()).every((r) => r.n === 1), `one workflow each for ${ids.length} shipments`)
  const failed = await last
  if (failed) throw failed
  t.equal((await fetch(`${order.at(-1)!.current.url}/health`)).status, 200, `${order.at(-1)!.name} is up again`)
})
