import t from 'tap'
import { build, type TestApp } from '../helpers/build.js'
import { secondConnection } from '../helpers/test-database.js'
import { createPlatform } from '../../src/platform.js'
import { buildApp } from '../../src/http/app.js'
import { modules } from '../../src/modules.js'
import { foldRoute, loadProfile } from '../../src/routes/route.js'
import { routesWorld } from './fixtures.js'

type Call = (method: string, path: string, body?: unknown) => Promise<{ statusCode: number; body: string; json(): any }>

/** A second API process on the same PostgreSQL (its own pool, its own projector); null on the embedded database. */
async function secondProcess(t: { teardown(fn: () => unknown): void }, h: TestApp, token: string): Promise<Call | null> {
  if (h.platform.database.kind !== 'postgres') return null
  const platform = await createPlatform(h.platform.config, { database: await secondConnection(t, h.platform.database) })
  const app = await buildApp(platform, { logger: false, modules })
  t.teardown(async () => { await app.close(); await platform.close() })
  return async (method, path, body) => app.inject({
    method: method as any, url: `/api/v1${path}`, headers: { accept: 'application/json', authorization: `Bearer ${token}` }, ...(body !== undefined ? { payload: body as any } : {}),
  }) as any
}

/** Where the task streams say each task is (their last marker). */
async function routeOfTasks(h: TestApp, ulids: string[]): Promise<Map<string, number | null>> {
  const out = new Map<string, number | null>()
  for (const u of ulids) {
    let on: number | null = null
    for (const e of await h.platform.store.readStream(`task-${u}`)) {
      if (e.type === 'TaskRouted') on = (e.data as any).route_id
      else if (e.type === 'TaskUnrouted') on = null
    }
    out.set(u, on)
  }
  return out
}

t.test('two API processes add one task to two routes at once: it lands on exactly one', async (t) => {
  const h = await build(t)
  const w = await routesWorld(h)
  const first: Call = (m, p, b) => w.api(m, p, b)
  const second = (await secondProcess(t, h, w.carrier.token)) ?? first
  const [r1, r2] = [await w.route(), await w.route()]
  for (let i = 0; i < 15; i++) {
    const task = await w.task()
    const [a, b] = await Promise.all([
      first('POST', `/routes/${r1.id}/tasks`, { task_ulids: [task.ulid] }),
      second('POST', `/routes/${r2.id}/tasks`, { task_ulids: [task.ulid] }),
    ])
    const codes = [a.statusCode, b.statusCode].sort()
    t.same(codes, [200, 422], `round ${i}: one wins, the other is refused (${a.body.slice(0, 80)} / ${b.body.slice(0, 80)})`)
    const loser = a.statusCode === 422 ? a : b
    t.ok(loser.json().errors['task_ulids.0'], 'the refusal names task_ulids.0')
    const on = (await routeOfTasks(h, [task.ulid])).get(task.ulid)
    t.equal(on, a.statusCode === 200 ? r1.id : r2.id, 'the task stream agrees with the winner')
  }
})

t.test('20 clients add and remove the same 50 tasks on 5 routes: one route at most, loads right, capacity never exceeded', async (t) => {
  // The per-token rate limit would answer most of this load with 409s: lifted, so every request reaches the routes.
  const h = await build(t, { rateLimitPerMinute: 100_000_000 })
  const w = await routesWorld(h)
  const second = await secondProcess(t, h, w.carrier.token)
  const callers: Call[] = [(m, p, b) => w.api(m, p, b), ...(second ? [second] : [])]
  const van = await w.vehicle({ grams: 6000, packages: 12 })
  const routes: number[] = []
  for (let i = 0; i < 5; i++) routes.push((await w.route({ vehicle_id: van.id })).id)
  const tasks: string[] = []
  for (let i = 0; i < 50; i++) {
    // Deliveries and a few pickups of different weights, so that order and membership both matter.
    const type = i % 5 === 0 ? 'pickup' : 'delivery'
    tasks.push((await w.task({ type, load: w.load(500 + (i % 4) * 250, 10, 1) })).ulid)
  }
  const seconds = h.platform.database.kind === 'postgres' ? 10 : 3
  const end = Date.now() + seconds * 1000
  const codes = new Map<number, number>()
  const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!
  await Promise.all(Array.from({ length: 20 }, async (_, client) => {
    const call = callers[client % callers.length]!
    while (Date.now() < end) {
      const route = pick(routes)
      const r = Math.random() < 0.55
        ? await call('POST', `/routes/${route}/tasks`, { task_ulids: [pick(tasks)], ...(Math.random() < 0.5 ? { position: 1 } : {}) })
        : await call('DELETE', `/routes/${route}/tasks/${pick(tasks)}`)
      codes.set(r.statusCode, (codes.get(r.statusCode) ?? 0) + 1)
      if (r.statusCode >= 500) t.fail(`a ${r.statusCode}: ${r.body}`)
      if (r.statusCode === 409) t.fail(`a 409: ${r.body}`)
    }
  }))
  t.comment(`answers over ${seconds} s: ${JSON.stringify(Object.fromEntries(codes))}`)
  t.ok((codes.get(200) ?? 0) > 20, 'many changes went through')
  await h.platform.projections.waitFor(await h.platform.store.headPosition(), 10_000)

  const onTask = await routeOfTasks(h, tasks)
  const seen = new Map<string, number>()
  for (const id of routes) {
    const history = await h.platform.store.readStream(`route-${id}`)
    // No load ever over capacity: the state after every event of the history.
    for (let i = 1; i <= history.length; i++) {
      const s = foldRoute(history.slice(0, i))
      const { overflow } = loadProfile(s.tasks, s.capacity)
      if (overflow) t.fail(`route ${id} after event ${i}: ${JSON.stringify(overflow)}`)
    }
    const state = foldRoute(history)
    for (const task of state.tasks) {
      if (seen.has(task.ulid)) t.fail(`task ${task.ulid} on routes ${seen.get(task.ulid)} and ${id}`)
      seen.set(task.ulid, id)
      if (onTask.get(task.ulid) !== id) t.fail(`task ${task.ulid}: the route says ${id}, its stream ${onTask.get(task.ulid)}`)
    }
    const route = (await w.api('GET', `/routes/${id}`)).json()
    t.same(route.tasks.map((x: any) => x.ulid), state.tasks.map((x) => x.ulid), `route ${id}: the read model has the stream's order`)
    t.same(route.tasks.map((x: any) => x.position), state.tasks.map((_, i) => i + 1), `route ${id}: positions 1..n`)
    t.same(route.load, loadProfile(state.tasks, state.capacity).peak, `route ${id}: load recomputed from its tasks`)
    const taskLoads = await Promise.all(route.tasks.map(async (x: any) => ({ ...(await w.api('GET', `/tasks/${x.ulid}`)).json(), x })))
    t.same(route.load, loadProfile(taskLoads.map((x) => ({ type: x.type, load: x.load, shipment_id: x.shipment_id })), state.capacity).peak, `route ${id}: and from the tasks' own loads`)
    for (const x of taskLoads) if (x.route_id !== id || x.position !== x.x.position) t.fail(`task ${x.ulid}: route_id ${x.route_id} position ${x.position}, route says ${id}/${x.x.position}`)
  }
  for (const [u, on] of onTask) if (on !== null && seen.get(u) !== on) t.fail(`task ${u}: its stream says route ${on}, no route has it`)
  t.pass(`${seen.size} of 50 tasks on a route at the end, each on one`)
})
