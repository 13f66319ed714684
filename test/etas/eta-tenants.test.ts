import t from 'tap'
import { sql } from 'kysely'
import { build } from '../helpers/build.js'
import { listen, openSse } from '../routes/progress/fixtures.js'
import { etaWorld, north } from './fixtures.js'

// "Nothing of one organization reaches another": positions, driver_position, ETAs and their frames.

t.test('positions and ETAs stay in their organization, and with their driver', async (t) => {
  const h = await build(t)
  const base = await listen(h.app)
  const w = await etaWorld(h)
  t.teardown(() => w.bg?.stop())
  const [a, b] = [await w.taskAt(2), await w.taskAt(4)]
  const id = await w.route([a, b])
  await w.report([north(0)])
  await w.transition(a, 'start', undefined, w.driver.token)
  await w.started(id)
  await w.routeWhen(id, (r) => r.tasks.every((x: any) => x.eta !== null), 'stated')

  const other = await h.createOrganization({ roles: ['carrier'] })
  const as = (method: string, path: string, token: string, body?: unknown) => h.call(method, `/api/v1${path}`, { token, ...(body !== undefined ? { body } : {}) })
  for (const path of [`/users/${w.driver.id}/positions`, `/routes/${id}`, `/routes/${id}/progress`, `/tasks/${a}`]) {
    t.equal((await as('GET', path, other.token)).statusCode, 404, `another organization: GET ${path}`)
  }
  const stream = await openSse(`${base}/api/v1/routes/${id}/progress/stream`, { authorization: `Bearer ${other.token}` })
  t.equal(stream.status, 404, 'another organization: the stream')
  stream.close()
  t.same((await as('GET', `/tasks?route_id=${id}`, other.token)).json().data, [], 'nor its tasks through a filter')
  t.same((await as('GET', '/routes', other.token)).json().routes.data, [])

  // Another driver of the same organization: another's route and its position are not its.
  const res = await h.call('POST', '/api/v1/users', { token: w.carrier.token, body: { name: 'Other Driver', email: `od-${Date.now()}@example.com`, role: 'driver' } })
  const otherDriver = res.json()
  t.equal((await as('GET', `/routes/${id}`, otherDriver.access_token)).statusCode, 404, 'another driver\'s route (and its driver_position) is a 404')
  t.equal((await as('GET', `/users/${w.driver.id}/positions`, otherDriver.access_token)).statusCode, 403, 'a driver reads nobody\'s positions')
  t.equal((await as('POST', '/drivers/me/positions', otherDriver.access_token, { positions: [{ ...north(50), recorded_at: new Date().toISOString() }] })).statusCode, 202)
  await new Promise((r) => setTimeout(r, 500))
  const route = (await as('GET', `/routes/${id}`, w.carrier.token)).json()
  t.same({ lat: route.driver_position.lat, lng: route.driver_position.lng }, north(0), 'another driver\'s position moves nothing of this route')
  t.equal((await as('GET', `/users/${otherDriver.user.id}/positions`, w.carrier.token)).json().data.length, 1, 'it is that driver\'s own')

  const rows = await sql<{ organization_id: string }>`
    select distinct organization_id from read_model.task_eta_history union select distinct organization_id from public.driver_positions`.execute(h.platform.db)
  t.same(rows.rows.map((r) => r.organization_id), [w.carrier.id], 'every stored row names its organization')
})
