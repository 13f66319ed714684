import t, { type Test } from 'tap'
import { build, type TestApp } from '../helpers/build.js'
import { createBus } from '../../src/infrastructure/bus/create-bus.js'
import type { Bus } from '../../src/infrastructure/bus/bus.js'
import { handleCommand } from '../../src/shared/command-handler.js'
import { shipmentStream } from '../../src/shipments/shipment.js'
import { eventMessage } from '../../src/processes/relay.js'
import type { ShipmentCreated } from '../../schemas/events/shipments.js'
import {
  SERVICE_ROUTES_SHIPMENTS_CONSUMER, ServiceRoutesShipments, type ShipmentWorkflowsPort, type WorkflowCallContext,
} from '../../src/processes/service-routes-shipments.js'
import { shipmentDecider } from '../shipments/fixtures/shipment-commands.js'
import { shipmentCreated } from '../shipments/fixtures/shipment-created.js'
import { rid, waitFor } from '../infrastructure/bus/bus-contract.js'

const natsUrl = process.env.NATS_URL
const ADAPTERS = natsUrl ? ['in-process', 'nats'] as const : ['in-process'] as const

interface Call { op: 'start' | 'cancel'; org: string; input: unknown; ctx: WorkflowCallContext }

/** The workflows port as a recorder; `failFirst` makes its first call of a key throw after recording it (a crash mid-call). */
function recordingPort(opts: { failFirst?: boolean } = {}): ShipmentWorkflowsPort & { calls: Call[] } {
  const calls: Call[] = []
  const failed = new Set<string>()
  const record = async (call: Call) => {
    calls.push(call)
    if (opts.failFirst && !failed.has(call.ctx.idempotencyKey)) {
      failed.add(call.ctx.idempotencyKey)
      throw new Error('workflows unavailable')
    }
  }
  return {
    calls,
    startShipmentWorkflow: (_p, org, input, ctx) => record({ op: 'start', org, input, ctx }),
    cancelShipmentWorkflow: (_p, org, input, ctx) => record({ op: 'cancel', org, input, ctx }),
  }
}

let next = 0
const system = (h: TestApp) => ({ now: h.platform.clock(), actor: { kind: 'system' as const, id: 'test' } })

/** A shipment through the aggregate's own command; returns its id. */
async function createShipment(h: TestApp, over: { integration: 'custom' | 'service_routes'; requires_pickup?: boolean; carrierOrg?: string }): Promise<number> {
  const id = 5_000_000 + ++next * 1000 + Math.floor(Math.random() * 1000)
  const data = shipmentCreated({
    id, ulid: `01SRS${id}`, integration: over.integration, requires_pickup: over.requires_pickup ?? false, created_at: h.platform.clock().toISOString(),
    carrier: { id: over.carrierOrg ?? 'org_routes_carrier', internal_id: 9, name: 'Routes', subdomain: 'routes' },
    service_type: over.integration === 'custom' ? { id: 1, code: 'std', name: 'Standard', carrier_hub_id: 'car_custom' } : null,
  })
  await handleCommand(h.platform.commands, shipmentStream(id), shipmentDecider, { type: 'CreateShipment', data }, system(h))
  return id
}

const cancel = (h: TestApp, id: number) =>
  handleCommand(h.platform.commands, shipmentStream(id), shipmentDecider, { type: 'CancelShipment', data: { cancelled_at: h.platform.clock().toISOString() } }, system(h))

/** What the relay would do: the shipment's events onto the bus. */
async function relay(h: TestApp, bus: Bus, ...ids: number[]) {
  for (const id of ids) await bus.publish((await h.platform.store.readStream(shipmentStream(id))).map(eventMessage))
}

const drained = (bus: Bus, name: string) => async () => (await bus.consumerStats()).find((c) => c.name === name)?.pending === 0

for (const adapter of ADAPTERS) {
  async function setup(t: Test) {
    const h = await build(t, { natsUrl: adapter === 'nats' ? natsUrl : undefined })
    const suffix = rid()
    const bus = await createBus({ natsUrl: adapter === 'nats' ? natsUrl : undefined, db: h.platform.database, nats: { streamName: `SRS_${suffix}`, subjectPrefix: `srs${suffix}` }, inProcess: { pollMs: 50 } })
    t.teardown(() => bus.close({ graceMs: 0 }))
    t.equal(bus.kind, adapter)
    return { h, bus }
  }

  t.test(`${adapter} bus: created shipments of service_routes carriers start their workflow; annulled ones cancel it`, async (t) => {
    const { h, bus } = await setup(t)
    const before = await createShipment(h, { integration: 'service_routes' }) // in the log before the first start
    const port = recordingPort()
    const consumer = new ServiceRoutesShipments(h.platform, { bus, workflows: port })
    await consumer.start()
    t.teardown(() => consumer.stop())

    const pickup = await createShipment(h, { integration: 'service_routes', requires_pickup: true, carrierOrg: 'org_a' })
    const plain = await createShipment(h, { integration: 'service_routes', carrierOrg: 'org_b' })
    const custom = await createShipment(h, { integration: 'custom' })
    const expiring = await createShipment(h, { integration: 'service_routes', carrierOrg: 'org_c' })
    await cancel(h, plain)
    await cancel(h, custom)
    await handleCommand(h.platform.commands, shipmentStream(expiring), shipmentDecider, { type: 'ExpireShipment', data: { now: h.platform.clock().toISOString(), expiry_hours: 0 } }, system(h))
    await relay(h, bus, before, pickup, plain, custom, expiring)
    await waitFor('the consumer drained', async () => port.calls.length >= 5 && await drained(bus, SERVICE_ROUTES_SHIPMENTS_CONSUMER)())

    // The shipment's facts travel with the start (from its event), checked below; the rest here.
    const summary = port.calls.map((c) => [c.op, c.org, c.op === 'start' ? { blueprint_key: (c.input as any).blueprint_key, data: (c.input as any).data } : c.input])
    t.same(summary.filter((c) => c[0] === 'start').sort((a, b) => String(a[1]).localeCompare(String(b[1]))), [
      ['start', 'org_a', { blueprint_key: 'pickup-delivery', data: { shipment_id: pickup } }],
      ['start', 'org_b', { blueprint_key: 'delivery', data: { shipment_id: plain } }],
      ['start', 'org_c', { blueprint_key: 'delivery', data: { shipment_id: expiring } }],
    ], 'pickup-delivery when requires_pickup, else delivery, in the carrier organization')
    t.same(summary.filter((c) => c[0] === 'cancel').sort((a, b) => String(a[1]).localeCompare(String(b[1]))), [
      ['cancel', 'org_b', { shipment_id: plain }], ['cancel', 'org_c', { shipment_id: expiring }],
    ], 'the cancelled and the expired one cancel; a custom carrier\'s shipment calls nothing')
    const ops = port.calls.filter((c) => (c.input as any).shipment_id === plain || (c.input as any).data?.shipment_id === plain).map((c) => c.op)
    t.same(ops, ['start', 'cancel'], 'ordered per shipment: the cancel never overtakes the start')
    t.notOk(port.calls.some((c) => JSON.stringify(c.input).includes(String(before))), 'a shipment in the log before the first start is left alone')

    const start = port.calls.find((c) => c.op === 'start' && c.org === 'org_a')!
    const created = (await h.platform.store.readStream(shipmentStream(pickup)))[0]!
    t.match(start.ctx, { actor: { kind: 'system', id: SERVICE_ROUTES_SHIPMENTS_CONSUMER }, causationId: created.id, idempotencyKey: `shipment:${pickup}:start-workflow` })
    const d = created.data as ShipmentCreated
    t.same((start.input as any).shipment, {
      origin: d.origin, destination: d.destination,
      load: { grams: d.packages.reduce((n, p) => n + p.weight.value, 0), volume_cm3: d.packages.reduce((n, p) => n + p.length.value * p.width.value * p.height.value, 0), packages: d.packages.length },
    }, 'the workflow gets the shipment\'s addresses and load from its event, not from a read model that may lag')
    t.equal(port.calls.find((c) => c.op === 'cancel' && c.org === 'org_b')!.ctx.idempotencyKey, `shipment:${plain}:cancel-workflow`, 'the cancel of a shipment carries its own key (calls of different shipments may come in any order)')
  })

  t.test(`${adapter} bus: a redelivered message repeats its call with the same key; a failed call is retried with the same key`, async (t) => {
    const { h, bus } = await setup(t)
    const port = recordingPort()
    const consumer = new ServiceRoutesShipments(h.platform, { bus, workflows: port })
    // The consumer's handler, its acknowledgement lost on the first delivery of each message: the bus redelivers it.
    const name = `${SERVICE_ROUTES_SHIPMENTS_CONSUMER}-ack-lost`
    const attempts = new Map<string, number>()
    const sub = await bus.subscribe({ ...ServiceRoutesShipments.options, name, retryDelaysMs: [50] }, async (d) => {
      attempts.set(d.id, d.attempt)
      await consumer.handle(d)
      if (d.attempt === 1) throw new Error('acknowledgement lost')
    })
    t.teardown(() => sub.stop({ graceMs: 0 }))
    const a = await createShipment(h, { integration: 'service_routes' })
    const b = await createShipment(h, { integration: 'service_routes', requires_pickup: true })
    await cancel(h, b)
    await relay(h, bus, a, b)
    await waitFor('every message redelivered and settled', async () => attempts.size === 3 && [...attempts.values()].every((n) => n >= 2) && await drained(bus, name)())
    // No bookkeeping of its own: each delivery calls the port, always with the key that makes the
    // port's second run a no-op (shipment-ports.ts; the real port is exercised in test/workflows/service-routes.test.ts).
    t.same(port.calls.map((c) => [c.op, c.ctx.idempotencyKey]).sort(), [
      ['cancel', `shipment:${b}:cancel-workflow`], ['cancel', `shipment:${b}:cancel-workflow`],
      ['start', `shipment:${a}:start-workflow`], ['start', `shipment:${a}:start-workflow`],
      ['start', `shipment:${b}:start-workflow`], ['start', `shipment:${b}:start-workflow`],
    ].sort(), 'each message came twice, and its call twice with the same key')

    await sub.stop({ graceMs: 0 })

    // The port fails once: the message is retried, and the repeat carries the same key.
    const flaky = recordingPort({ failFirst: true })
    const retrying = new ServiceRoutesShipments(h.platform, { bus, workflows: flaky })
    const name2 = `${SERVICE_ROUTES_SHIPMENTS_CONSUMER}-flaky`
    const sub2 = await bus.subscribe({ ...ServiceRoutesShipments.options, name: name2, retryDelaysMs: [50] }, retrying.handle)
    t.teardown(() => sub2.stop({ graceMs: 0 }))
    const c = await createShipment(h, { integration: 'service_routes' })
    await relay(h, bus, c)
    // A new consumer also gets the messages still retained before it (a, b): only c's calls count here.
    const ofC = () => flaky.calls.filter((x) => x.ctx.idempotencyKey.startsWith(`shipment:${c}:`))
    await waitFor('the retry', async () => ofC().length >= 2 && await drained(bus, name2)())
    t.same(ofC().map((x) => x.ctx.idempotencyKey), [`shipment:${c}:start-workflow`, `shipment:${c}:start-workflow`], 'called again with the same key after its failure, then no more')
  })
}
