// A 3-node JetStream cluster under an API process (issue 33 points 2, 3 and 5): the stream's
// leader is killed (-9) while shipments keep coming, each causing an organization webhook (its
// service_routes workflow's `workflow.created`) through two bus hops. Every acknowledged
// shipment's webhook arrives exactly once, events flow again within 10 s of the kill, and /ready
// answers within a second throughout, saying the bus is degraded while publishes fail. Then
// NATS goes away entirely: /ready and /metrics still answer within a second.
import t from 'tap'
import { startNatsCluster } from '../helpers/nats-cluster.js'
import { natsServerBinary } from '../helpers/nats-server.js'
import { startLocalPostgres } from '../helpers/local-postgres.js'
import { family, parsePrometheus } from '../helpers/prometheus.js'
import { deployment, ship, sleep, until } from '../processes/fixtures/two-api-processes.js'
import type { ApiProcess } from '../helpers/api-process.js'
import { type Arrival, busOf, hookWorkflows, startWorkflowReceiver, timed } from './fixtures/workflow-webhooks.js'

t.test('the stream leader killed: every webhook once, events flowing within 10 s, /ready fast and honest', { timeout: 120_000, skip: natsServerBinary() ? false : 'nats-server is not installed' }, async (t) => {
  const [cluster, pg] = await Promise.all([startNatsCluster(3), startLocalPostgres()])
  t.teardown(() => cluster.destroy())
  t.teardown(() => pg.stop())
  await cluster.ready()
  const receiver = await startWorkflowReceiver((fn) => t.teardown(fn))

  const d = deployment({ databaseUrl: pg.url, natsUrl: cluster.urls }, (fn) => t.teardown(fn))
  t.teardown(() => d.close())
  Object.assign(d.env, { NATS_STREAM_REPLICAS: '3', ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_DELAYS_MS: '200,500,1000' })
  const api: ApiProcess = await d.start()
  if (process.env.KEEP_API_LOG) t.teardown(async () => (await import('node:fs')).writeFileSync(process.env.KEEP_API_LOG!, api.output()))
  const { shipperToken, carrierToken, carrierId } = await d.setup(api)
  t.equal(await hookWorkflows(api.url, carrierToken, receiver.url), 201, 'the carrier organization has a webhook on workflow.created')
  const stream = d.env.NATS_STREAM!

  // Reactions skip events from before their first start: shipments count from the first whose
  // webhook arrived (every reaction on the way had started by then).
  await until('a first webhook (the reactions have started)', async () => {
    await ship(api, shipperToken, carrierId)
    return receiver.arrivals.length > 0
  }, 40_000)
  const firstCounted = Math.max(...receiver.arrivals.map((a) => a.shipmentId)) + 1

  // Shipments one after another all along; each acknowledged one is recorded with its time.
  const acked = new Map<number, number>()
  let shipping = true
  const sender = (async () => {
    while (shipping) {
      const id = await ship(api, shipperToken, carrierId)
      if (id !== undefined && id >= firstCounted) acked.set(id, Date.now())
      await sleep(80)
    }
  })()
  // /ready every 200 ms from the start: how long each answer took and what it said of the bus.
  const probes: { at: number; ms: number; status: number; bus: string | undefined; text?: string }[] = []
  let probing = true
  const prober = (async () => {
    while (probing) {
      const r = await timed(`${api.url}/ready`)
      probes.push({ at: Date.now(), ms: r.ms, status: r.status, bus: busOf(r.text)?.status, ...(r.status === 200 ? {} : { text: r.text.slice(0, 600) }) })
      await sleep(200)
    }
  })()
  t.teardown(async () => { shipping = false; probing = false; await Promise.all([sender, prober]) })

  await until('webhooks flowing before the kill', async () => receiver.arrivals.filter((a) => acked.has(a.shipmentId)).length >= 5, 30_000)
  // Every consumer made and the background attached (its bus check in /ready): a node lost while
  // it starts only delays the start (retried), but /ready has no bus figures before it.
  await until('the background started', async () => busOf((await timed(`${api.url}/ready`)).text)?.status === 'ok', 40_000)
  const leader = await until('the stream\'s leader', () => cluster.streamLeader(stream), 10_000)
  const replicas = await fetch(`${cluster.nodes[0]!.monitor}/jsz?accounts=true&streams=true&config=true`).then((r) => r.json()) as any
  const info = replicas.account_details.flatMap((a: any) => a.stream_detail ?? []).find((s: any) => s.name === stream)
  t.equal(info?.config?.num_replicas, 3, 'the platform made its stream with NATS_STREAM_REPLICAS copies')
  const killedAt = Date.now()
  await cluster.nodes.find((n) => n.name === leader)!.kill('SIGKILL')
  t.comment(`killed ${leader}, the stream's leader`)
  await sleep(10_000)
  shipping = false
  await sender
  const ids = [...acked.keys()]
  await until('a webhook for every acknowledged shipment', async () => ids.every((id) => receiver.arrivals.some((a) => a.shipmentId === id)), 30_000)
    .catch(() => undefined)
  await sleep(500) // a late duplicate would show now
  probing = false
  await prober

  const byShipment = new Map<number, Arrival[]>()
  for (const a of receiver.arrivals.filter((x) => x.shipmentId >= firstCounted)) byShipment.set(a.shipmentId, [...(byShipment.get(a.shipmentId) ?? []), a])
  const missing = ids.filter((id) => !byShipment.has(id))
  const doubled = [...byShipment].filter(([, as]) => as.length > 1).map(([id]) => id)
  t.same(missing, [], `every one of ${ids.length} acknowledged shipments got its webhook`)
  t.same(doubled, [], 'none got it twice')
  t.equal(new Set(receiver.arrivals.map((a) => a.id)).size, receiver.arrivals.length, 'no message id delivered twice')
  const afterKill = ids.filter((id) => acked.get(id)! > killedAt).length
  t.ok(afterKill >= 20, `${afterKill} shipments acknowledged after the kill`)
  // Flowing again: the first webhook of a shipment acknowledged after the kill. The longest any
  // event waited past the kill (or its own acknowledgement) adds the backlog's drain: reported.
  const counted = receiver.arrivals.filter((a) => acked.has(a.shipmentId))
  const flowing = Math.min(...counted.filter((a) => acked.get(a.shipmentId)! > killedAt).map((a) => a.at)) - killedAt
  const stall = Math.max(...counted.map((a) => a.at - Math.max(acked.get(a.shipmentId)!, killedAt)))
  t.ok(flowing <= 10_000, `events flowing again within 10 s of the kill (${(flowing / 1000).toFixed(1)} s; the longest wait, backlog drained: ${(stall / 1000).toFixed(1)} s)`)
  if (missing.length || flowing > 10_000) {
    const waits = ids.map((id) => ({ id, ackedAfterKill: acked.get(id)! - killedAt, arrivedAfterKill: (byShipment.get(id)?.[0]?.at ?? NaN) - killedAt }))
    t.comment(JSON.stringify(waits.filter((w) => !(w.arrivedAfterKill < 8000) && w.arrivedAfterKill !== w.ackedAfterKill)))
    t.comment(api.output().split('\n').filter((l) => /"level":(40|50)/.test(l)).slice(-60).join('\n'))
  }

  const slowest = Math.max(...probes.map((p) => p.ms))
  t.ok(slowest < 1000, `/ready answered within 1 s throughout (${probes.length} probes, slowest ${slowest.toFixed(0)} ms)`)
  t.ok(probes.some((p) => p.at > killedAt && p.bus === 'degraded'), `/ready said the bus was degraded after the kill (${probes.filter((p) => p.bus === 'degraded').length} times)`)
  const refused = probes.filter((p) => p.status !== 200)
  t.same(refused, [], '/ready kept answering 200: the API serves while the bus recovers')
  const end = JSON.parse((await timed(`${api.url}/ready`)).text)
  t.equal(end.checks.bus.status, 'ok', `the bus ok again at the end (${end.checks.bus.message ?? ''})`)
  t.equal(end.status, 'ready')

  // NATS entirely down: both endpoints still answer within a second, from the state kept.
  await Promise.all(cluster.nodes.map((n) => n.kill('SIGKILL')))
  let sawDegraded = false
  let sawDown = false
  for (let i = 0; i < 6; i++) {
    const [ready, metrics] = await Promise.all([timed(`${api.url}/ready`), timed(`${api.url}/metrics`)])
    t.ok(ready.ms < 1000 && metrics.ms < 1000, `NATS down: /ready ${ready.ms.toFixed(0)} ms (${ready.status}), /metrics ${metrics.ms.toFixed(0)} ms (${metrics.status})`)
    t.equal(metrics.status, 200)
    sawDegraded ||= busOf(ready.text)?.status === 'degraded' && ready.status === 200
    sawDown ||= family(parsePrometheus(metrics.text), 'bus_up')?.samples.some((s) => s.value === 0) ?? false
    await sleep(300)
  }
  t.ok(sawDegraded, 'with NATS down /ready says the bus is degraded (200: the API still takes writes)')
  t.ok(sawDown, 'and /metrics says bus_up 0')
  t.equal(api.child.exitCode, null, 'the API process never exited')

})
