// A lost NATS node (issue 33 "Figures"): an API process (src/main.ts) on a 3-node JetStream
// cluster of its own with NATS_STREAM_REPLICAS=3 and a PostgreSQL of its own, shipments every
// ~100 ms, each causing a workflow.created webhook to a loopback receiver (two bus hops). The
// stream's leader is killed (-9) BENCH_KILLS times (default 3; the node restarted between kills).
// Per kill: time from the kill to events flowing again (the first webhook of a shipment created
// after the kill; goal ≤ 10 s), the longest any event waited past the kill (the backlog drained),
// the slowest /ready, and whether /ready said the bus was degraded. No assertions.
//   bash test/bench/run-all.sh nats-failover   (or npx tsx test/bench/nats-failover.bench.ts)
import { startNatsCluster } from '../helpers/nats-cluster.js'
import { startLocalPostgres } from '../helpers/local-postgres.js'
import { deployment, ship, sleep, until } from '../processes/fixtures/two-api-processes.js'
import { busOf, hookWorkflows, startWorkflowReceiver, timed } from '../outages/fixtures/workflow-webhooks.js'

const KILLS = Number(process.env['BENCH_KILLS'] ?? 3)
const teardowns: (() => unknown)[] = []
const teardown = (fn: () => unknown) => { teardowns.push(fn) }
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`

async function main() {
  const [cluster, pg] = await Promise.all([startNatsCluster(3), startLocalPostgres()])
  teardown(() => cluster.destroy())
  teardown(() => pg.stop())
  await cluster.ready()
  const receiver = await startWorkflowReceiver(teardown)
  const d = deployment({ databaseUrl: pg.url, natsUrl: cluster.urls }, teardown)
  teardown(() => d.close())
  Object.assign(d.env, { NATS_STREAM_REPLICAS: '3', ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_DELAYS_MS: '200,500,1000' })
  const api = await d.start()
  const { shipperToken, carrierToken, carrierId } = await d.setup(api)
  if (await hookWorkflows(api.url, carrierToken, receiver.url) !== 201) throw new Error('webhook not made')
  await until('a first webhook', async () => { await ship(api, shipperToken, carrierId); return receiver.arrivals.length > 0 }, 60_000)
  await until('the background started', async () => busOf((await timed(`${api.url}/ready`)).text)?.status === 'ok', 60_000)
  const stream = d.env.NATS_STREAM!
  console.log(`nats-failover: 3 nodes (nats-server ${'2.9'}), stream ${stream} in 3 copies, one API process, shipments every ~100 ms, ${KILLS} kills of the stream's leader`)

  const rows: { flowing: number; longest: number; slowestReady: number; degraded: number; lost: number; doubled: number }[] = []
  for (let k = 1; k <= KILLS; k++) {
    const acked = new Map<number, number>()
    const probes: { ms: number; bus: string | undefined }[] = []
    let running = true
    const sender = (async () => {
      while (running) {
        const id = await ship(api, shipperToken, carrierId)
        if (id !== undefined) acked.set(id, Date.now())
        await sleep(80)
      }
    })()
    const prober = (async () => {
      while (running) {
        const r = await timed(`${api.url}/ready`)
        probes.push({ ms: r.ms, bus: busOf(r.text)?.status })
        await sleep(200)
      }
    })()
    await sleep(2000)
    const leader = await until('the stream\'s leader', () => cluster.streamLeader(stream), 20_000)
    const node = cluster.nodes.find((n) => n.name === leader)!
    const killedAt = Date.now()
    await node.kill('SIGKILL')
    await sleep(12_000)
    running = false
    await Promise.all([sender, prober])
    const ids = [...acked.keys()]
    const arrived = () => ids.filter((id) => receiver.arrivals.some((a) => a.shipmentId === id)).length
    await until('every webhook', async () => arrived() === ids.length, 60_000).catch(() => undefined)
    const counted = receiver.arrivals.filter((a) => acked.has(a.shipmentId))
    const flowing = Math.min(...counted.filter((a) => acked.get(a.shipmentId)! > killedAt).map((a) => a.at)) - killedAt
    const longest = Math.max(...counted.map((a) => a.at - Math.max(acked.get(a.shipmentId)!, killedAt)))
    const perShipment = new Map<number, number>()
    for (const a of counted) perShipment.set(a.shipmentId, (perShipment.get(a.shipmentId) ?? 0) + 1)
    const row = {
      flowing, longest, slowestReady: Math.max(...probes.map((p) => p.ms)), degraded: probes.filter((p) => p.bus === 'degraded').length,
      lost: ids.length - arrived(), doubled: [...perShipment.values()].filter((n) => n > 1).length,
    }
    rows.push(row)
    console.log(`kill ${k} (${leader}, ${ids.length} shipments): flowing again after ${s(row.flowing)}; longest wait ${s(row.longest)}; slowest /ready ${row.slowestReady.toFixed(0)} ms; degraded in ${row.degraded} of ${probes.length} /ready; lost ${row.lost}, doubled ${row.doubled}`)
    // The node back, and the stream's three copies current again, before the next kill.
    await node.start()
    await until('the node caught up', async () => {
      const jsz = await fetch(`${node.monitor}/jsz?accounts=true&streams=true`).then((r) => r.json(), () => undefined) as any
      const st = (jsz?.account_details ?? []).flatMap((a: any) => a.stream_detail ?? []).find((x: any) => x.name === stream)
      return st?.cluster?.leader && (st.cluster.replicas ?? []).length === 2 && st.cluster.replicas.every((r: any) => r.current)
    }, 60_000).catch(() => undefined)
    await sleep(3000)
  }
  const flows = rows.map((r) => r.flowing).sort((a, b) => a - b)
  console.log(`flowing again: ${flows.map(s).join(', ')} (goal ≤ 10 s: ${flows.every((f) => f <= 10_000) ? 'met' : 'NOT met'}); longest waits ${rows.map((r) => s(r.longest)).join(', ')}; lost ${rows.reduce((n, r) => n + r.lost, 0)}, doubled ${rows.reduce((n, r) => n + r.doubled, 0)}`)
  console.log(`API process still running: ${api.child.exitCode === null}`)
}

try {
  await main()
} finally {
  for (const fn of teardowns.reverse()) await Promise.resolve(fn()).catch(() => undefined)
}
process.exit(0)
