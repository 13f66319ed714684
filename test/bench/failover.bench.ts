// Failover after kill -9 (issue 21 "Failover in seconds"), on PostgreSQL + NATS with two API
// processes (src/main.ts) sharing one database and one NATS stream:
//  - relay: from the kill of the relay's owner to the first event of a shipment created afterwards
//    reaching the bus (a probe consumer), and the worst publish latency of shipments created in the
//    seconds after the kill;
//  - consumers: the worst time from a shipment's 201 to its workflow being listed (the
//    service_routes consumer and the manager), for shipments created around the kill;
// each beside the same figures with no kill, in the same run. Goal: ≤ 3 s for both.
//   bash test/bench/run-all.sh failover      (or DATABASE_URL=… NATS_URL=… npx tsx test/bench/failover.bench.ts)
import { NatsBus } from '../../src/infrastructure/bus/nats-bus.js'
import { openDatabase } from '../../src/infrastructure/database/connection.js'
import { deployment, relayOwner, ship, sleep, until, workflowsOf } from '../processes/fixtures/two-api-processes.js'
import type { ApiProcess } from '../helpers/api-process.js'
import { percentile, scratchDatabase } from './bench-database.js'

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 2)
const natsUrl = process.env['NATS_URL']
if (!natsUrl) { process.stderr.write('NATS_URL is not set (bash test/bench/run-all.sh failover sets it)\n'); process.exit(2) }

const teardowns: (() => unknown)[] = []
const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`

interface Round { relayBack: number; publishMax: number; publishP50: number; workflowMax: number; workflowP50: number }

/** Shipments every 100 ms for `ms` through `p`: when each was acknowledged, when its event reached the bus, when its workflow showed. */
async function traffic(p: ApiProcess, tokens: { shipperToken: string; carrierToken: string; carrierId: string }, seen: Map<number, number>, ms: number) {
  const sent: { id: number; at: number }[] = []
  const workflowAt = new Map<number, number>()
  let sending = true
  // Watched while they are sent: each workflow's time is taken when it first shows.
  const watcher = (async () => {
    while (sending || workflowAt.size < sent.length) {
      for (const s of sent) if (!workflowAt.has(s.id) && (await workflowsOf(p, tokens.carrierToken, s.id)) > 0) workflowAt.set(s.id, Date.now())
      await sleep(20)
    }
  })()
  const end = Date.now() + ms
  while (Date.now() < end) {
    const id = await ship(p, tokens.shipperToken, tokens.carrierId)
    if (id !== undefined) sent.push({ id, at: Date.now() })
    await sleep(100)
  }
  sending = false
  await Promise.race([watcher, sleep(120_000).then(() => { throw new Error('workflows missing after 2 minutes') })])
  await until('every event on the bus', async () => sent.every((s) => seen.has(s.id)), 60_000)
  return sent.map((s) => ({ ...s, bus: seen.get(s.id)! - s.at, workflow: workflowAt.get(s.id)! - s.at }))
}

async function round(kill: boolean): Promise<Round> {
  const db = await scratchDatabase('failover')
  teardowns.push(() => db.drop())
  const d = deployment({ databaseUrl: db.url, natsUrl }, (fn) => teardowns.push(fn))
  const a = await d.start()
  const b = await d.start()
  const tokens = await d.setup(a)
  const owner = await until('a relay owner', () => relayOwner([a, b]))
  const survivor = owner === a ? b : a
  // A probe on the deployment's stream: when each shipment's ShipmentCreated reached the bus.
  const handle = await openDatabase({ url: db.url })
  const probe = await NatsBus.connect({ url: natsUrl!, db: handle.db, streamName: d.env['NATS_STREAM']!, subjectPrefix: d.env['NATS_SUBJECT_PREFIX']! })
  const seen = new Map<number, number>()
  await probe.subscribe({ name: 'bench_probe', subjects: ['events.shipment.ShipmentCreated'], startAt: 'new' }, (m) => {
    const id = Number((m.data as { streamId: string }).streamId.slice('shipment-'.length))
    if (!seen.has(id)) seen.set(id, Date.now())
  })
  await traffic(survivor, tokens, seen, 1000) // warm
  const killedAt = Date.now()
  if (kill) { owner.child.kill('SIGKILL'); await owner.exited }
  const r = await traffic(survivor, tokens, seen, 5000)
  await probe.close({ graceMs: 0 })
  await handle.close()
  for (const p of [a, b]) if (p.child.exitCode === null && p.child.signalCode === null) await p.stop()
  d.close()
  const bus = r.map((x) => x.bus).sort((x, y) => x - y)
  const wf = r.map((x) => x.workflow).sort((x, y) => x - y)
  const firstAfter = Math.min(...r.map((x) => x.at + x.bus))
  return { relayBack: firstAfter - killedAt, publishMax: bus.at(-1)!, publishP50: percentile(bus, 50), workflowMax: wf.at(-1)!, workflowP50: percentile(wf, 50) }
}

async function main() {
  console.log(`failover: two API processes (tsx) on PostgreSQL + NATS; shipments every 100 ms through the survivor for 5 s after the kill; ${ROUNDS} rounds each`)
  for (const kill of [false, true]) {
    for (let i = 0; i < ROUNDS; i++) {
      const r = await round(kill)
      console.log(`${kill ? 'kill -9 of the relay owner' : 'no kill (baseline)        '}  first event on the bus ${fmt(r.relayBack)} after ${kill ? 'the kill' : 'the mark'}; `
        + `publish p50 ${fmt(r.publishP50)} max ${fmt(r.publishMax)}; workflow p50 ${fmt(r.workflowP50)} max ${fmt(r.workflowMax)} (consumer stall)`)
    }
  }
}

main().catch((err) => { console.error(err); process.exitCode = 1 }).finally(async () => {
  for (const fn of teardowns.reverse()) await Promise.resolve(fn()).catch(() => undefined)
})
