// A PostgreSQL restart under load (issue 33, "Figures"): two API processes (src/main.ts) on a
// PostgreSQL server and a nats-server of the bench's own, six clients creating shipments through
// both (Idempotency-Key, retried on 503), while the server restarts with `pg_ctl restart -m fast`
// or `-m immediate`. For each restart, from the moment the database answers again (a `select 1`
// polled every 10 ms succeeds):
//  - the first 2xx write (a 201 answered after that moment);
//  - events flowing: the workflow of the first shipment acknowledged after that moment is listed
//    (its ShipmentCreated went through the relay, NATS and the service_routes consumer);
// and how long the database was away, what the clients were refused meanwhile and the slowest
// answer (a write that committed just before the restart waits, bounded, for the read models).
//   bash test/bench/run-all.sh db-outage      (or npx tsx test/bench/db-outage.bench.ts)
import pg from 'pg'
import { startPostgresServer } from '../helpers/postgres-server.js'
import { startNatsServer } from '../helpers/nats-server.js'
import { deployment, relayOwner, sleep, until, workflowsOf } from '../processes/fixtures/two-api-processes.js'
import { startShipmentLoad } from '../outages/fixtures/shipment-load.js'

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 2)
const teardowns: (() => unknown)[] = []
const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`

/** When the server answers a fresh connection again, polled from before the restart. */
function watchServer(url: string) {
  let stopped = false
  let downAt: number | undefined
  let backAt: number | undefined
  const done = (async () => {
    while (!stopped && backAt === undefined) {
      const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 500 })
      c.on('error', () => undefined)
      const ok = await c.connect().then(() => c.query('select 1')).then(() => true, () => false)
      await c.end().catch(() => undefined)
      if (!ok) downAt ??= Date.now()
      else if (downAt !== undefined) backAt = Date.now()
      await sleep(10)
    }
  })()
  return {
    async result() { await done; return { downAt: downAt!, backAt: backAt! } },
    stop() { stopped = true },
  }
}

async function main() {
  const [server, nats] = await Promise.all([startPostgresServer(), startNatsServer()])
  teardowns.push(() => server.destroy(), () => nats.destroy())
  const d = deployment({ databaseUrl: server.url, natsUrl: nats.url }, (fn) => teardowns.push(fn))
  teardowns.push(() => d.close())
  const [a, b] = await Promise.all([d.start(), d.start()])
  const processes = [a, b]
  const tokens = await d.setup(a)
  await until('a relay owner', () => relayOwner(processes))
  const load = startShipmentLoad(processes, tokens.shipperToken, tokens.carrierId, { clients: 6, requestTimeoutMs: 30_000 })
  teardowns.push(() => load.stop())
  await until('writes under way', async () => load.acks.length >= 20)
  console.log(`db-outage: two API processes (tsx) on PostgreSQL 15 + NATS, 6 clients creating shipments (Idempotency-Key, retried on 503); ${ROUNDS} restarts of each kind`)
  for (const mode of ['fast', 'immediate'] as const) {
    for (let i = 0; i < ROUNDS; i++) {
      await sleep(1000)
      const refusedBefore = load.refusals.length
      const watch = watchServer(server.url)
      await sleep(50)
      const restartAt = Date.now()
      await server.restart(mode)
      const { downAt, backAt } = await watch.result()
      const firstWrite = await until('a 201 after the restart', async () => load.acks.find((x) => x.at > backAt), 60_000)
      const workflowAt = await until('the workflow of a shipment created after the restart', async () =>
        ((await workflowsOf(b, tokens.carrierToken, firstWrite.id)) > 0 ? Date.now() : undefined), 60_000)
      const refused = load.refusals.slice(refusedBefore)
      const slowest = Math.max(...load.answers.filter((x) => x.at >= restartAt && x.at <= workflowAt).map((x) => x.ms))
      const kinds = new Map<string, number>()
      for (const r of refused) kinds.set(`${r.status}${r.code ? ` ${r.code}` : ''}`, (kinds.get(`${r.status}${r.code ? ` ${r.code}` : ''}`) ?? 0) + 1)
      console.log(`-m ${mode.padEnd(9)} database away ${fmt(backAt - Math.max(downAt, restartAt))}; from answering again: first 2xx write ${fmt(firstWrite.at - backAt)}, `
        + `events flowing (workflow of a shipment created after it) ${fmt(workflowAt - backAt)}; refusals meanwhile: ${JSON.stringify(Object.fromEntries(kinds))}, slowest answer ${fmt(slowest)}`)
    }
  }
  await load.stop()
  const exited = processes.filter((p) => p.child.exitCode !== null || p.child.signalCode !== null).length
  console.log(`API processes exited: ${exited} of 2; shipments acknowledged: ${load.acks.length}; never acknowledged: ${load.unsettled.length}`)
}

main().catch((err) => { console.error(err); process.exitCode = 1 }).finally(async () => {
  for (const fn of teardowns.reverse()) await Promise.resolve(fn()).catch(() => undefined)
})
