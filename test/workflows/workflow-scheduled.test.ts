import { randomBytes } from 'node:crypto'
import t from 'tap'
import { build, type TestApp } from '../helpers/build.js'
import { startBackground } from '../../src/processes/background.js'
import { silentLogger } from '../../src/infrastructure/bus/bus.js'
import { until } from '../notifications/fixtures/receiver.js'
import { closeIdleConnections } from '../../src/notifications/safe-http.js'
import { newAddress, workflowsWorld } from './fixtures.js'
import { isScheduled } from '../../src/workflows/schedule.js'

const natsUrl = process.env.NATS_URL
const ADAPTERS = natsUrl ? ['in-process', 'nats'] as const : ['in-process'] as const

t.teardown(() => closeIdleConnections())

const statusOf = async (h: TestApp, token: string, id: number): Promise<string> =>
  (await h.call('GET', `/api/v1/workflows/${id}`, { token })).json().status

/** Waits until the workflow shows `status` (the manager runs on the bus). */
const reaches = (h: TestApp, token: string, id: number, status: string) =>
  until(async () => (await statusOf(h, token, id)) === status, 10_000, `workflow ${id} ${status}`)

t.test('isScheduled: every open task routed, or assigned with a window', async (t) => {
  const f = (open: boolean, routed: boolean, assigned = false) => ({ open, routed, assigned })
  t.ok(isScheduled([f(true, true)]))
  t.notOk(isScheduled([f(true, true), f(true, false)]), 'one open task not routed')
  t.ok(isScheduled([f(true, true), f(false, false)]), 'a final task does not count')
  t.ok(isScheduled([f(true, false, true), f(true, true)]), 'assigned with a window')
  t.notOk(isScheduled([f(false, true)]), 'no open task: nothing scheduled')
  t.notOk(isScheduled([]))
})

for (const adapter of ADAPTERS) {
  t.test(`workflows become scheduled when their open tasks go on routes (${adapter} bus)`, async (t) => {
    const h = await build(t, { natsUrl: adapter === 'nats' ? natsUrl : undefined })
    const w = await workflowsWorld(h)
    const suffix = randomBytes(4).toString('hex')
    const bg = await startBackground(h.platform, silentLogger, { nats: { streamName: `WFS_${suffix}`, subjectPrefix: `wfs${suffix}` } })
    t.teardown(() => bg.stop())
    const token = w.carrier.token
    const api = (method: string, path: string, body?: unknown, as = token) => h.call(method, `/api/v1${path}`, { token: as, ...(body !== undefined ? { body } : {}) })
    const route = async () => {
      const res = await api('POST', '/routes', { shift_date: '2026-11-26', driver_id: w.driver.id })
      t.equal(res.statusCode, 201, res.body)
      return res.json().route as { id: number }
    }

    t.test('one delivery task on a route → scheduled; the driver starts it → in_progress', async (t) => {
      const wf = await w.started({ blueprint_key: 'delivery', data: { destination: newAddress() } })
      t.equal(wf.status, 'new')
      t.equal(wf.tasks.length, 1)
      const r = await route()
      t.equal((await api('POST', `/routes/${r.id}/tasks`, { task_ulids: [wf.tasks[0].ulid] })).statusCode, 200)
      await reaches(h, token, wf.id, 'scheduled')
      const events = (await api('GET', `/workflows/${wf.id}/events`)).json().events as Array<{ type: string }>
      t.equal(events.filter((e) => e.type === 'WorkflowScheduled').length, 1, 'scheduled once')

      t.equal((await api('POST', `/routes/${r.id}/publish`)).statusCode, 200)
      const started = await api('POST', `/tasks/${wf.tasks[0].ulid}/start`, undefined, w.driver.token)
      t.equal(started.statusCode, 200, started.body)
      await reaches(h, token, wf.id, 'in_progress')
    })

    t.test('two open tasks: scheduled only once both are routed (on different routes)', async (t) => {
      await w.publish({
        key: `both-${suffix}`, name: 'Both at once',
        steps: [
          { key: 'p', name: 'Pick up', task: { type: 'pickup', address: 'origin' }, on_complete: [] },
          { key: 'd', name: 'Deliver', task: { type: 'delivery', address: 'destination' }, on_complete: [{ do: 'complete_workflow' }] },
        ],
        start_steps: ['p', 'd'],
      })
      const wf = await w.started({ blueprint_key: `both-${suffix}`, data: { origin: newAddress({ city: 'Córdoba', state: 'Córdoba' }), destination: newAddress() } })
      t.equal(wf.tasks.length, 2)
      const [r1, r2] = [await route(), await route()]
      t.equal((await api('POST', `/routes/${r1.id}/tasks`, { task_ulids: [wf.tasks[0].ulid] })).statusCode, 200)
      // The manager handled that TaskRouted (and did nothing) once this unrelated workflow's task is handled after it.
      const probe = await w.started({ blueprint_key: 'delivery', data: { destination: newAddress() } })
      t.equal((await api('POST', `/routes/${r1.id}/tasks`, { task_ulids: [probe.tasks[0].ulid] })).statusCode, 200)
      await reaches(h, token, probe.id, 'scheduled')
      t.equal(await statusOf(h, token, wf.id), 'new', 'one of two open tasks routed: still new')

      t.equal((await api('POST', `/routes/${r2.id}/tasks`, { task_ulids: [wf.tasks[1].ulid] })).statusCode, 200)
      await reaches(h, token, wf.id, 'scheduled')
    })

    t.test('both tasks in one request (two TaskRouted in one write): scheduled once', async (t) => {
      const wf = await w.started({ blueprint_key: `both-${suffix}`, data: { origin: newAddress({ city: 'Córdoba', state: 'Córdoba' }), destination: newAddress() } })
      t.equal((await api('POST', `/routes/${(await route()).id}/tasks`, { task_ulids: wf.tasks.map((x: { ulid: string }) => x.ulid) })).statusCode, 200)
      await reaches(h, token, wf.id, 'scheduled')
      // Time for the second TaskRouted to be handled as well (a later workflow's routing is handled first; not a strict order).
      const probe = await w.started({ blueprint_key: 'delivery', data: { destination: newAddress() } })
      t.equal((await api('POST', `/routes/${(await route()).id}/tasks`, { task_ulids: [probe.tasks[0].ulid] })).statusCode, 200)
      await reaches(h, token, probe.id, 'scheduled')
      const events = (await api('GET', `/workflows/${wf.id}/events`)).json().events as Array<{ type: string }>
      t.equal(events.filter((e) => e.type === 'WorkflowScheduled').length, 1, 'one WorkflowScheduled for two TaskRouted')
    })

  })
}
