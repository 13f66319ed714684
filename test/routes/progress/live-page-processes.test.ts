import t from 'tap'
import { build } from '../../helpers/build.js'
import { twoProcesses } from '../../helpers/two-processes.js'
import { listen, openSse } from './fixtures.js'
import { etaWorld, north } from '../../etas/fixtures.js'

// Two API processes on one database (and one bus, in-process or NATS), each with its background: a
// live page's stream held by the first gets the status changes, the route's start (the life cycle on
// the bus), the ETAs and the driver's positions made through the second.

const natsUrl = process.env.NATS_URL
const ADAPTERS = natsUrl ? ['in-process', 'nats'] as const : ['in-process'] as const

for (const adapter of ADAPTERS) {
  t.test(`a live page's stream on one process follows what is made through another (${adapter} bus)`, async (t) => {
    const h = await build(t, { sseHeartbeatMs: 60_000, natsUrl: adapter === 'nats' ? natsUrl : undefined })
    const base = await listen(h.app)
    const w = await etaWorld(h, { background: false })
    const { suffix, app2 } = await twoProcesses(t, h, 'lpp')

    const [a, b] = [await w.taskAt(2), await w.taskAt(4)]
    const id = await w.route([a, b])
    const driver2 = (await w.api('POST', '/users', { name: 'Otto Other', email: `otto-${suffix}@example.com`, role: 'driver' })).json().user.id as string
    const other = await w.route([await w.taskAt(6)], driver2)
    const link = (await w.api('POST', `/routes/${id}/live-links`, {})).json().url as string
    const page = await openSse(`${base}${new URL(link).pathname}/stream`)
    t.teardown(() => page.close())
    await page.until((e) => e.some((x) => x.event === 'snapshot'))
    const otherPage = await openSse(`${base}${new URL((await w.api('POST', `/routes/${other}/live-links`, {})).json().url).pathname}/stream`)
    t.teardown(() => otherPage.close())
    await otherPage.until((e) => e.some((x) => x.event === 'snapshot'))

    const via2 = (url: string, token: string, body: unknown = {}) =>
      app2.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}` }, payload: body as any })
    const at = new Date().toISOString()
    t.equal((await via2('/api/v1/drivers/me/positions', w.driver.token, { positions: [{ ...north(0), recorded_at: at }] })).statusCode, 202)
    t.equal((await via2(`/api/v1/tasks/${a}/start`, w.driver.token)).statusCode, 200)
    const got = await page.until((e) => ['driver.position', 'task.started', 'route.started', 'task.eta'].every((n) => e.some((x) => x.event === n)), 20_000)
    const pos = got.find((x) => x.event === 'driver.position')!
    t.same(JSON.parse(pos.data!), { route_id: id, ...north(0), heading: null, recorded_at: at }, 'the position, from the other process')
    t.equal(pos.id, undefined, 'no id: the feed\'s Last-Event-ID is left alone')
    t.ok(got.filter((x) => x.event === 'task.eta').some((x) => JSON.parse(x.data!).task_ulid === b), 'an ETA of the next stop')
    t.equal((await via2(`/api/v1/tasks/${a}/complete`, w.driver.token, { signed_by: 'Ana' })).statusCode, 200)
    await page.until((e) => e.some((x) => x.event === 'task.completed'))
    await new Promise((r) => setTimeout(r, 300))
    t.notOk(otherPage.events.some((x) => x.event === 'driver.position'), 'another driver\'s route hears nothing of it')
  })
}
