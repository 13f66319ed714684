import { randomBytes } from 'node:crypto'
import t from 'tap'
import { build, type TestApp } from '../helpers/build.js'
import { startBackground } from '../../src/processes/background.js'
import { silentLogger } from '../../src/infrastructure/bus/bus.js'
import { until } from '../notifications/fixtures/receiver.js'
import { closeIdleConnections } from '../../src/notifications/safe-http.js'
import { newAddress, routesWorld } from './fixtures.js'

// DESIGN §3.9: published → started when its first task starts, → finished when every task is
// final, through the route-lifecycle consumer on the bus; a started route puts its delivery tasks'
// service_routes shipments out for delivery.

const natsUrl = process.env.NATS_URL
const ADAPTERS = natsUrl ? ['in-process', 'nats'] as const : ['in-process'] as const

t.teardown(() => closeIdleConnections())

for (const adapter of ADAPTERS) {
  t.test(`route life cycle on the ${adapter} bus`, async (t) => {
    const h: TestApp = await build(t, { natsUrl: adapter === 'nats' ? natsUrl : undefined })
    const w = await routesWorld(h)
    const suffix = randomBytes(4).toString('hex')
    const bg = await startBackground(h.platform, silentLogger, { nats: { streamName: `RLC_${suffix}`, subjectPrefix: `rlc${suffix}` } })
    t.teardown(() => bg.stop())
    const routeOf = async (id: number) => (await w.api('GET', `/routes/${id}`)).json()
    const waitRoute = async (id: number, status: string) => {
      await until(async () => (await routeOf(id)).status === status, 15_000, `route ${id} ${status}`)
      return routeOf(id)
    }

    t.test('started by its first task, out_for_delivery for the service_routes shipment, finished when all are final', async (t) => {
      const ship = await h.call('POST', '/api/v1/shipments', {
        token: w.shipper.token,
        body: { carrier_id: w.carrier.id, origin: newAddress({ city: 'Córdoba', state: 'Córdoba' }), destination: newAddress(), packages: [{ grams: 1200, length: 10, width: 20, height: 30 }] },
      })
      t.equal(ship.statusCode, 201, ship.body)
      const shipmentId = ship.json().shipment.id
      let deliveryUlid = ''
      await until(async () => {
        const list = (await w.api('GET', `/tasks?shipment_id=${shipmentId}&type=delivery`)).json()
        deliveryUlid = list.data?.[0]?.ulid ?? ''
        return deliveryUlid !== ''
      }, 15_000, 'the workflow\'s delivery task')
      const other = await w.task()
      const route = await w.route({ driver_id: w.driver.id, task_ulids: [deliveryUlid, other.ulid] })
      t.equal((await w.api('POST', `/routes/${route.id}/publish`)).statusCode, 200)

      t.equal((await w.transition(deliveryUlid, 'start', undefined, w.driver.token)).statusCode, 200)
      const started = await waitRoute(route.id, 'started')
      t.ok(started.started_at)
      t.match(started.progress, { total: 2, started: 1, pending: 1 })
      await until(async () => (await h.call('GET', `/api/v1/shipments/${shipmentId}`, { token: w.shipper.token })).json().status?.code === 'out_for_delivery', 15_000, 'out_for_delivery')
      const tracking = (await h.call('GET', `/api/v1/shipments/${shipmentId}/tracking`, { token: w.shipper.token })).json().tracking as any[]
      t.match(tracking.find((i) => i.status.code === 'out_for_delivery'), { source: 'routes' })

      t.equal((await w.transition(deliveryUlid, 'complete', { signed_by: 'Ana' }, w.driver.token)).statusCode, 200)
      await new Promise((r) => setTimeout(r, 300))
      t.equal((await routeOf(route.id)).status, 'started', 'one task still open')
      t.equal((await w.transition(other.ulid, 'cancel')).statusCode, 200)
      const finished = await waitRoute(route.id, 'finished')
      t.ok(finished.finished_at)
      t.match(finished.progress, { total: 2, complete: 1, cancelled: 1, percent: 100 })
      const types = (await h.platform.store.readStream(`route-${route.id}`)).map((e) => e.type)
      t.equal(types.filter((x) => x === 'RouteStarted').length, 1, 'started once')
      t.equal(types.filter((x) => x === 'RouteFinished').length, 1, 'finished once')
    })

    t.test('a draft route does not start; removing the last open task finishes a started route', async (t) => {
      const [a, b] = [await w.task(), await w.task()]
      const draft = await w.route({ task_ulids: [a.ulid] })
      await w.transition(a.ulid, 'start')
      await new Promise((r) => setTimeout(r, 500))
      t.equal((await routeOf(draft.id)).status, 'draft')
      const [c, d] = [await w.task(), await w.task()]
      const route = await w.route({ driver_id: w.driver.id, task_ulids: [c.ulid, d.ulid, b.ulid] })
      await w.api('POST', `/routes/${route.id}/publish`)
      await w.transition(c.ulid, 'complete', { signed_by: 'x' })
      await waitRoute(route.id, 'started')
      await w.transition(d.ulid, 'fail', { reason: 'closed' })
      t.equal((await w.api('DELETE', `/routes/${route.id}/tasks/${b.ulid}`)).statusCode, 200)
      await waitRoute(route.id, 'finished')
      t.equal((await w.api('POST', `/routes/${route.id}/tasks`, { task_ulids: [b.ulid] })).statusCode, 409, 'a finished route does not change')
    })
  })
}
