import t from 'tap'
import { build } from '../helpers/build.js'
import { twoProcesses } from '../helpers/two-processes.js'
import { listen, openSse } from '../routes/progress/fixtures.js'
import { etaWorld, north } from './fixtures.js'

// DESIGN §3.10: "across API processes a new position reaches every subscriber". Two API processes on
// one database (and one bus), each with its background; one ETA engine is active. A position posted
// to either process moves the ETAs seen on a stream held by either.

const natsUrl = process.env.NATS_URL
const ADAPTERS = natsUrl ? ['in-process', 'nats'] as const : ['in-process'] as const

for (const adapter of ADAPTERS) {
  t.test(`a position reported to one process reaches streams held by the other (${adapter} bus)`, async (t) => {
    const h = await build(t, { sseHeartbeatMs: 60_000, natsUrl: adapter === 'nats' ? natsUrl : undefined })
    const base1 = await listen(h.app)
    const w = await etaWorld(h, { background: false })
    const { bg1, app2, bg2 } = await twoProcesses(t, h, 'etp')
    const base2 = await listen(app2)
    t.ok(bg1.etas.isActive !== bg2.etas.isActive, 'one engine active')

    const [a, b] = [await w.taskAt(2), await w.taskAt(4)]
    const id = await w.route([a, b])
    t.equal((await w.report([north(0)])).statusCode, 202)
    t.equal((await w.transition(a, 'start', undefined, w.driver.token)).statusCode, 200)
    await w.started(id)
    await w.routeWhen(id, (r) => r.tasks.every((x: any) => x.eta?.basis === 'position'), 'stated')

    const auth = { authorization: `Bearer ${w.carrier.token}` }
    const on1 = await openSse(`${base1}/api/v1/routes/${id}/progress/stream`, auth)
    const on2 = await openSse(`${base2}/api/v1/routes/${id}/progress/stream`, auth)
    t.teardown(() => { on1.close(); on2.close() })
    for (const s of [on1, on2]) await s.until((e) => e.some((x) => x.event === 'snapshot'))
    const etaCount = (e: { event?: string }[]) => e.filter((x) => x.event === 'task.eta').length

    const post = (base: string, p: { lat: number; lng: number }) => fetch(`${base}/api/v1/drivers/me/positions`, {
      method: 'POST', headers: { authorization: `Bearer ${w.driver.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ positions: [{ ...p, recorded_at: new Date().toISOString() }] }),
    })
    t.equal((await post(base2, north(-3))).status, 202, 'reported to the second process')
    for (const [name, s] of [['first', on1], ['second', on2]] as const) {
      const got = await s.until((e) => etaCount(e) >= 2)
      t.ok(got.filter((x) => x.event === 'task.eta').every((x) => JSON.parse(x.data!).eta.basis === 'position'), `the ${name} process's stream moved`)
    }
    t.equal((await post(base1, north(-8))).status, 202, 'reported to the first process')
    for (const s of [on1, on2]) await s.until((e) => etaCount(e) >= 4)
    t.same(on1.events.filter((x) => x.event === 'task.eta').map((x) => x.id), on2.events.filter((x) => x.event === 'task.eta').map((x) => x.id), 'the same frames, the same ids, in both')
    const r2 = await app2.inject({ method: 'GET', url: `/api/v1/routes/${id}`, headers: auth })
    t.same(JSON.parse(r2.body).driver_position, { ...north(-8), recorded_at: JSON.parse(r2.body).driver_position.recorded_at }, 'the newest position, read through the other process')
  })
}
