// /metrics as Prometheus scrapes it: read with a real text-format parser, with this process's
// histograms (requests by route pattern, event-store writes), process figures and projection lag.
import t from 'tap'
import { build } from '../helpers/build.js'
import { family, parsePrometheus, value } from '../helpers/prometheus.js'

t.test('/metrics: request and append histograms, process metrics, projection lag', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ roles: ['carrier'] })
  const made = await h.call('POST', '/api/v1/vehicles', { token: carrier.token, body: { name: 'Van', plate: 'M 1' } })
  t.equal(made.statusCode, 201)
  const vehicle = made.json().vehicle
  t.equal((await h.call('GET', `/api/v1/vehicles/${vehicle.id}`, { token: carrier.token })).statusCode, 200)
  t.equal((await h.call('GET', '/api/v1/vehicles/veh_nope', { token: carrier.token })).statusCode, 404)
  t.equal((await h.call('POST', '/api/v1/vehicles', { token: carrier.token, body: { plate: 1 } })).statusCode, 422)

  const res = await h.call('GET', '/metrics')
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/)
  const families = parsePrometheus(res.body)
  const fam = (name: string) => family(families, name)

  t.equal(fam('http_request_duration_seconds')?.type, 'histogram')
  const byRoute = (route: string, method: string, status: string) => value(families, 'http_request_duration_seconds_count', { route, method, status_code: status })
  t.equal((byRoute('/api/v1/vehicles', 'POST', '201')), 1, 'the create, by its route pattern')
  t.equal((byRoute('/api/v1/vehicles', 'POST', '422')), 1, 'the refused create, apart')
  t.equal((byRoute('/api/v1/vehicles/:id', 'GET', '200')), 1, 'the read, by pattern, not by id')
  t.equal((byRoute('/api/v1/vehicles/:id', 'GET', '404')), 1)
  t.notOk(families.some((f) => f.samples.some((m) => m.labels['route']?.includes(vehicle.id))), 'no concrete id in a label')
  t.equal(value(families, 'http_request_duration_seconds_bucket', { route: '/api/v1/vehicles', method: 'POST', status_code: '201', le: '+Inf' }), 1, 'buckets up to +Inf')

  const appends = value(families, 'event_store_append_duration_seconds_count', { outcome: 'ok' }) ?? 0
  t.ok(appends >= 2, `appends timed (${appends}: the organization and the vehicle at least)`)
  t.ok((value(families, 'event_store_append_duration_seconds_sum', { outcome: 'ok' }) ?? 0) > 0)

  t.ok(fam('process_cpu_user_seconds_total'), 'default process metrics')
  t.ok(fam('nodejs_eventloop_lag_seconds'))
  t.ok(fam('process_resident_memory_bytes'))
  t.equal(value(families, 'projection_lag_events', { projection: 'vehicles' }), 0, 'projection lag per projection')
  t.equal(fam('projection_parked_events_total')?.type, 'counter')
})

t.test('an append conflict is timed apart from the successes', async (t) => {
  const h = await build(t)
  await h.platform.store.append('metric-probe-1', [{ type: 'Probe', data: {}, metadata: { actor: { kind: 'system', id: 't' }, occurred_at: new Date().toISOString() } }], 'no_stream')
  await t.rejects(h.platform.store.append('metric-probe-1', [{ type: 'Probe', data: {}, metadata: { actor: { kind: 'system', id: 't' }, occurred_at: new Date().toISOString() } }], 'no_stream'))
  const families = parsePrometheus((await h.call('GET', '/metrics')).body)
  t.equal(value(families, 'event_store_append_duration_seconds_count', { outcome: 'conflict' }), 1)
})
