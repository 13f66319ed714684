// One trace from the HTTP request that creates a shipment, through the append, the projection
// round, the relay and the notifier's consumer, to the `new` webhook the carrier receives (which
// carries the same trace in its `traceparent` header). The SDK here is the real Node SDK with its
// in-memory exporter; production exports over OTLP (src/infrastructure/tracing/start-tracing.ts).
import t from 'tap'
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node'
import { setTracingEnabled } from '../../../src/infrastructure/tracing/tracing.js'
import { silentLogger } from '../../../src/infrastructure/bus/bus.js'
import { startBackground } from '../../../src/processes/background.js'
import { closeIdleConnections } from '../../../src/notifications/safe-http.js'
import { build } from '../../helpers/build.js'
import { startReceiver, until } from '../../notifications/fixtures/receiver.js'

const exporter = new InMemorySpanExporter()
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
provider.register()
setTracingEnabled(true)
t.teardown(async () => { setTracingEnabled(false); closeIdleConnections(); await provider.shutdown() })

const address = { name: 'Ana', street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR' }
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'

for (const adapter of process.env.NATS_URL ? ['in-process', 'nats'] as const : ['in-process'] as const) {
  t.test(`a shipment creation and its new notification share one trace (${adapter} bus)`, async (t) => {
    exporter.reset()
    const h = await build(t, { natsUrl: adapter === 'nats' ? process.env.NATS_URL : undefined, webhookTimeoutMs: 3000 })
    const rx = await startReceiver(t)
    const org = await h.createOrganization({ roles: ['carrier', 'shipper'], carriers_enabled: true })
    const made = await h.call('POST', '/api/v1/carriers', { token: org.token, body: { name: 'Hub', integration: 'custom', visibility: 'private', notification_url: rx.url } })
    t.equal(made.statusCode, 201, made.body)
    const carrierId = made.json().carrier.id
    t.equal((await h.call('POST', `/api/v1/carriers/${carrierId}/service-types`, { token: org.token, body: { code: 'express', name: 'Express' } })).statusCode, 201)
    const bg = await startBackground(h.platform, silentLogger)
    t.teardown(() => bg.stop())

    // The caller sends its own trace: the server continues it.
    const res = await h.app.inject({
      method: 'POST', url: '/api/v1/shipments',
      headers: { authorization: `Bearer ${org.token}`, traceparent: `00-${CALLER_TRACE}-00f067aa0ba902b7-01` },
      payload: { carrier_id: org.id, service_type_code: 'express', origin: address, destination: address, packages: [{ grams: 1, length: 1, width: 1, height: 1 }] },
    })
    t.equal(res.statusCode, 201, res.body)
    const shipmentId = res.json().shipment.id

    await until(() => rx.received.some((r) => JSON.parse(r.body).shipment_id === shipmentId), 10_000, 'the new webhook')
    const webhook = rx.received.find((r) => JSON.parse(r.body).shipment_id === shipmentId)!
    t.match(webhook.headers['traceparent'], new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`), 'the webhook carries the request\'s trace')

    const created = (await h.platform.store.readStream(`shipment-${shipmentId}`))[0]!
    t.match(created.metadata.traceparent, new RegExp(`^00-${CALLER_TRACE}-`), 'the event keeps the trace in its metadata')

    await until(() => exporter.getFinishedSpans().some((s) => s.name.startsWith('webhook POST')), 5000, 'the webhook span')
    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === CALLER_TRACE)
    const named = (prefix: string) => spans.find((s) => s.name.startsWith(prefix))
    const request = named('POST /api/v1/shipments')
    t.ok(request, 'the request span')
    t.equal(request?.parentSpanContext?.spanId, '00f067aa0ba902b7', 'under the caller\'s span')
    const append = spans.find((s) => s.name === 'event_store.append' && String(s.attributes['event_store.streams']).split(',').includes(`shipment-${shipmentId}`))
    t.equal(append?.parentSpanContext?.spanId, request?.spanContext().spanId, 'the append, under the request')
    t.ok(named('projection round'), 'a projection round in the trace')
    const publish = named('relay publish events.shipment.ShipmentCreated')
    t.ok(publish, 'the relay\'s publish')
    const consume = spans.find((s) => s.name.startsWith('consume ') && s.parentSpanContext?.spanId === publish?.spanContext().spanId)
    t.ok(consume, `a consumer span under the publish (${spans.map((s) => s.name).join(', ')})`)
    const call = named('webhook POST carrier')
    t.ok(call, 'the outgoing webhook call')
    t.equal(webhook.headers['traceparent'], `00-${CALLER_TRACE}-${call?.spanContext().spanId}-01`, 'whose span id the receiver sees')
  })
}

t.test('without a started SDK nothing is traced: no metadata, no header', async (t) => {
  setTracingEnabled(false)
  t.teardown(() => setTracingEnabled(true))
  const h = await build(t)
  const org = await h.createOrganization({ roles: ['carrier'] })
  const res = await h.app.inject({ method: 'POST', url: '/api/v1/vehicles', headers: { authorization: `Bearer ${org.token}`, traceparent: `00-${CALLER_TRACE}-00f067aa0ba902b7-01` }, payload: { name: 'Van', plate: 'T 1' } })
  t.equal(res.statusCode, 201)
  const [event] = await h.platform.store.readStream(`vehicle-${res.json().vehicle.id}`)
  t.equal(event!.metadata.traceparent, undefined)
})
