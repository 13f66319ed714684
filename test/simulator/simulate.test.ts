import t from 'tap'
import { join } from 'node:path'
import { createScratchDatabase } from '../helpers/test-database.js'
import { startApiProcess } from '../helpers/api-process.js'
import { spawnCli } from '../helpers/cli-process.js'

// The driver simulator (issue 23, item 5) run as a newcomer runs it, `npm run simulate`, against a
// real server (on PostgreSQL, + NATS when the suite has a nats-server) whose clock runs
// 120 times faster: positions reach the server, ETAs show on GET /routes/{id} while the day runs,
// and the stops get done.
const ADMIN = 'adm_simulator_test_0123456789'
const RATE = 120

t.test('npm run simulate drives a planned day through the public API: positions stored, ETAs on the route, tasks completed', async (t) => {
  const dir = t.testdir({ data: {} })
  const env: NodeJS.ProcessEnv = { DATA_DIR: join(dir, 'data'), ADMIN_TOKEN: ADMIN, CLOCK_RATE: String(RATE), RATE_LIMIT_PER_MINUTE: '0' }
  env.DATABASE_URL = await createScratchDatabase(t)
  if (process.env.NATS_URL) {
    const tag = `${process.pid}_${Date.now() % 1e6}`
    Object.assign(env, { NATS_URL: process.env.NATS_URL, NATS_STREAM: `SIMULATE_${tag}`, NATS_SUBJECT_PREFIX: `simulate${tag}.` })
  }
  const server = await startApiProcess(env, { teardown: (fn) => t.teardown(fn) })
  const org = await (await fetch(`${server.url}/admin/v1/organizations`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Simulated Carrier', subdomain: 'simulated', roles: ['carrier'] }),
  })).json() as { access_token: string }
  const get = async (path: string) => {
    const res = await fetch(`${server.url}/api/v1${path}`, { headers: { authorization: `Bearer ${org.access_token}` } })
    t.equal(res.status, 200, `GET ${path}`)
    return res.json() as Promise<any>
  }

  const sim = spawnCli('src/cli/simulate.ts', [
    '--base', server.url, '--token', org.access_token, '--routes', '2', '--stops', '3', '--clock-rate', String(RATE),
    '--position-every', '20', '--late', '0', '--radius-km', '3', '--seed', '7',
  ], {}, ['DATABASE_URL', 'NATS_URL'])
  t.teardown(() => { if (sim.child.exitCode === null) sim.child.kill('SIGKILL') })
  const killer = setTimeout(() => sim.child.kill('SIGKILL'), 150_000)

  // While the day runs: every route's tasks as GET /routes/{id} shows them, every 250 ms.
  const routeIds = () => [...sim.stdout().matchAll(/GET \S+\/api\/v1\/routes\/(\d+)/g)].map((m) => Number(m[1]))
  const etasSeen = new Map<string, { at: string; from: string; to: string; basis: string }>()
  let positionSeen: unknown = null
  let done = false
  void sim.exited.then(() => { done = true })
  while (!done) {
    for (const id of routeIds()) {
      const route = await get(`/routes/${id}`)
      for (const task of route.tasks) if (task.eta) etasSeen.set(task.ulid, task.eta)
      positionSeen ??= route.driver_position
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  clearTimeout(killer)
  const code = await sim.exited
  t.equal(code, 0, `the simulator ends well:\n${sim.stdout()}\n${sim.stderr()}`)
  t.match(sim.stdout(), /planned 2 routes \(3, 3 stops\), 0 unassigned/)
  t.match(sim.stdout(), /day done: \d+ stops complete, \d+ failed/)

  const ids = routeIds()
  t.equal(ids.length, 2, 'two routes driven')
  t.ok(etasSeen.size >= 3, `ETAs appeared on GET /routes/{id} tasks while the day ran (${etasSeen.size} tasks)`)
  for (const eta of etasSeen.values()) {
    t.ok(Date.parse(eta.from) <= Date.parse(eta.at) && Date.parse(eta.at) <= Date.parse(eta.to), 'an ETA lies within its range')
  }
  t.ok(positionSeen, 'the route showed its driver\'s newest position')

  // The route finishes by the route-lifecycle reaction, after its last task's event went over the bus.
  const settled = async (id: number) => {
    for (let i = 0; i < 150; i++) {
      const route = await get(`/routes/${id}`)
      if (route.status === 'finished') return route
      await new Promise((r) => setTimeout(r, 100))
    }
    return get(`/routes/${id}`)
  }
  let completed = 0
  for (const id of ids) {
    const route = await settled(id)
    t.equal(route.status, 'finished', `route ${id} finished`)
    t.equal(route.tasks.filter((x: { status: string }) => x.status === 'pending' || x.status === 'started').length, 0, 'no task left open')
    completed += route.progress.complete
    const positions = await get(`/users/${route.driver.id}/positions?from=${encodeURIComponent(route.created_at)}&to=${encodeURIComponent(new Date(Date.parse(route.finished_at) + 60_000).toISOString())}`)
    // Three legs of a few km at ~30 km/h, a position every 20 s of server time, plus the stops' stays.
    t.ok(positions.data.length >= 10, `route ${id}'s driver's positions were stored (${positions.data.length})`)
  }
  t.ok(completed >= 1, `tasks completed (${completed} of 6)`)

  // An existing route, planned by hand: `--route ID:TOKEN` drives it as it is, with the driver's
  // token alone (no --token), and creates nothing. Of its stops, one has exact coordinates, one only
  // its city's point (driven there, with a warning naming it) and one only its state's centre (named
  // and left alone: nowhere to drive to).
  const post = async (path: string, body?: unknown) => {
    const res = await fetch(`${server.url}/api/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${org.access_token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) })
    t.ok(res.status < 300, `POST ${path}: ${res.status}`)
    return res.json() as Promise<any>
  }
  const driver = await post('/users', { name: 'Own Driver', email: 'own@sim.example', role: 'driver' })
  const van = await post('/vehicles', { name: 'Own van', plate: 'OWN 1', capacity: { packages: 5 } })
  const task = async (name: string, place: Record<string, unknown>) => (await post('/tasks', {
    type: 'delivery', duration_minutes: 4, address: { name, street: 'Calle', street_number: '10', state: 'Santa Fe', country: 'AR', ...place },
  })).task.ulid as string
  const exact = await task('Own exact', { city: 'Rosario', geo_latitude: -32.94, geo_longitude: -60.65 })
  const cityLevel = await task('Own city', { city: 'Rosario' })
  const stateLevel = await task('Own state', { city: 'Villa Inventada Del Simulador' })
  const plan = await post('/routes/plan', { shift_date: new Date().toISOString().slice(0, 10), task_ulids: [exact, cityLevel], vehicle_ids: [van.vehicle.id], driver_ids: [driver.user.id] })
  const own = plan.routes[0].id as number
  await post(`/routes/${own}/tasks`, { task_ulids: [stateLevel] })
  await post(`/routes/${own}/publish`)
  const planned = await get(`/routes/${own}`)
  t.same(planned.tasks.map((x: { address: { geo_precision: string } }) => x.address.geo_precision).sort(), ['city', 'exact', 'state'], 'one stop of each precision')
  const users = (await get('/users?perPage=100')).data.length
  const again = spawnCli('src/cli/simulate.ts', ['--base', server.url, '--route', `${own}:${driver.access_token}`, '--clock-rate', String(RATE), '--position-every', '20'], {}, ['DATABASE_URL', 'NATS_URL', 'SIM_TOKEN'])
  t.teardown(() => { if (again.child.exitCode === null) again.child.kill('SIGKILL') })
  const stop = setTimeout(() => again.child.kill('SIGKILL'), 120_000)
  t.equal(await again.exited, 0, `--route ends well without --token:\n${again.stdout()}\n${again.stderr()}`)
  clearTimeout(stop)
  const position = (ulid: string) => planned.tasks.find((x: { ulid: string }) => x.ulid === ulid).position as number
  t.match(again.stdout(), new RegExp(`route ${own}: warning: stop ${position(cityLevel)} \\(${cityLevel}, Calle 10, Rosario\\): a city-level address \\(geo_precision city\\): driven to Rosario's point`), 'the city-level stop is named, with where it is driven')
  t.match(again.stdout(), new RegExp(`route ${own}: stop ${position(stateLevel)} \\(${stateLevel}, Calle 10, Villa Inventada Del Simulador\\) skipped: its address is only placed at its state's centre`), 'the state-level stop is named, with why it is skipped')
  t.match(again.stdout(), /1 existing routes \(2 open stops\)/)
  t.notMatch(again.stdout(), new RegExp(`stop ${position(exact)} \\(${exact}`), 'the exact stop needs no word')
  // The stop nobody could drive to is cancelled by hand; then the route can finish.
  await post(`/tasks/${stateLevel}/cancel`, { reason: 'no place to drive to' })
  const drove = await settled(own)
  t.equal(drove.status, 'finished', 'the existing route was driven to its end')
  t.same(drove.tasks.map((x: { ulid: string }) => x.ulid), planned.tasks.map((x: { ulid: string }) => x.ulid), 'in its own order')
  const final = new Map(drove.tasks.map((x: { ulid: string; status: string }) => [x.ulid, x.status]))
  t.ok(['complete', 'failed'].includes(String(final.get(cityLevel))), 'the city-level stop was driven to its end')
  t.equal(final.get(stateLevel), 'cancelled')
  t.equal((await get('/users?perPage=100')).data.length, users, 'no user created')
  t.equal(await server.stop(), 0)
})
