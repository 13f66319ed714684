import { randomBytes } from 'node:crypto'
import t from 'tap'
import { decodeTime, isValid } from 'ulidx'
import { build, type TestApp } from '../helpers/build.js'
import { secondConnection } from '../helpers/test-database.js'
import { createPlatform } from '../../src/platform.js'
import { startBackground } from '../../src/processes/background.js'
import { BUS_HEADERS, silentLogger } from '../../src/infrastructure/bus/bus.js'
import { eventMessage } from '../../src/processes/relay.js'
import { collectBusMetrics } from '../../src/processes/metrics.js'
import { startReceiver, until } from '../notifications/fixtures/receiver.js'
import { closeIdleConnections } from '../../src/notifications/safe-http.js'
import { newAddress, workflowsWorld } from './fixtures.js'

const natsUrl = process.env.NATS_URL
const ADAPTERS = natsUrl ? ['in-process', 'nats'] as const : ['in-process'] as const

t.teardown(() => closeIdleConnections())

type Wf = { id: number; status: string; tasks: Array<{ ulid: string; step_key: string; status: string }>; errors: unknown[] }

/** Polls GET /workflows/{id} until `check` holds (the manager runs asynchronously on the bus). */
const waitWorkflow = async (h: TestApp, token: string, id: number, check: (w: Wf) => boolean, what: string): Promise<Wf> => {
  let last: Wf | undefined
  await until(async () => {
    last = (await h.call('GET', `/api/v1/workflows/${id}`, { token })).json()
    return check(last!)
  }, 10_000, what)
  return last!
}

for (const adapter of ADAPTERS) {
  t.test(`the workflow process manager on the ${adapter} bus`, async (t) => {
    const h = await build(t, { natsUrl: adapter === 'nats' ? natsUrl : undefined })
    const w = await workflowsWorld(h)
    const suffix = randomBytes(4).toString('hex')
    const nats = { streamName: `WFM_${suffix}`, subjectPrefix: `wfm${suffix}` }
    const bg = await startBackground(h.platform, silentLogger, { nats })
    t.equal(bg.bus.kind, adapter)
    t.teardown(() => bg.stop())
    const token = w.carrier.token

    t.test('complete the pickup → the delivery task appears (depending on it); fail the delivery → retries, then failed', async (t) => {
      const wf = await w.started()
      const pickup = wf.tasks[0]
      t.equal((await w.transition(pickup.ulid, 'complete')).statusCode, 200)
      // The task's skipped start and its completion are separate deliveries, handled in any order.
      const withDelivery = await waitWorkflow(h, token, wf.id, (x) => x.tasks.length === 2 && x.status === 'in_progress', 'the delivery task, and in_progress')
      t.equal(withDelivery.status, 'in_progress', 'a task started (the complete recorded a skipped start)')
      const delivery = withDelivery.tasks[1]!
      t.match(delivery, { step_key: 'delivery', status: 'pending' })
      const task = (await h.call('GET', `/api/v1/tasks/${delivery.ulid}`, { token })).json()
      t.same(task.dependencies, [pickup.ulid], 'depends_on: the latest task of the pickup step')
      // A time-ordered ULID like every other task's: its time is the completion's, and it sorts after the pickup.
      const completedAt = (await h.platform.store.readStream(`task-${pickup.ulid}`)).find((e) => e.type === 'TaskCompleted')!.recordedAt
      t.ok(isValid(delivery.ulid), 'a valid ULID')
      t.equal(decodeTime(delivery.ulid), completedAt.getTime(), 'its time part is the triggering event\'s time')
      t.ok(delivery.ulid > pickup.ulid, 'sorts after the task before it')
      t.match(task, { workflow_id: wf.id, type: 'delivery', address: { city: { name: 'Rosario' } } })

      // delivery: retry up to 3 attempts in all, then the list goes on to fail_workflow.
      let current = delivery.ulid
      for (let attempt = 2; attempt <= 3; attempt++) {
        t.equal((await w.transition(current, 'fail', { reason: 'no_answer' })).statusCode, 200)
        const next = await waitWorkflow(h, token, wf.id, (x) => x.tasks.length === attempt + 1, `attempt ${attempt}`)
        t.equal(next.status, 'in_progress')
        current = next.tasks[attempt]!.ulid
        t.match(next.tasks[attempt], { step_key: 'delivery', status: 'pending' }, `the retry task of attempt ${attempt}`)
      }
      t.equal((await w.transition(current, 'fail', { reason: 'no_answer' })).statusCode, 200)
      const failed = await waitWorkflow(h, token, wf.id, (x) => x.status === 'failed', 'the workflow failed')
      t.equal(failed.tasks.length, 4, 'no fourth attempt')
      t.type((failed as unknown as { failed_at: string }).failed_at, 'string')

      const events = (await h.call('GET', `/api/v1/workflows/${wf.id}/events`, { token })).json().events as Array<{ type: string; data: any; metadata: any }>
      const made = events.filter((e) => e.type === 'WorkflowTaskCreated' && e.data.action_key)
      t.same(made.map((e) => [e.data.step_key, e.data.attempt]), [['delivery', 1], ['delivery', 2], ['delivery', 3]])
      t.equal(made[0]!.data.action_key, `workflow:${wf.id}:step:pickup:attempt:1:action:1`)
      const pickupEvents = (await h.call('GET', `/api/v1/tasks/${pickup.ulid}/events`, { token })).json().events as Array<{ type: string; position: string }>
      const completed = (await h.platform.store.readStream(`task-${pickup.ulid}`)).find((e) => e.type === 'TaskCompleted')!
      t.ok(pickupEvents.length > 0)
      t.equal(made[0]!.metadata.causation_id, completed.id, 'the action\'s event names the task event that caused it')
      const spent = events.find((e) => e.type === 'WorkflowActionTaken' && e.data.do === 'retry')
      t.match(spent?.data, { outcome: 'retries spent', action_key: `workflow:${wf.id}:step:delivery:attempt:3:action:1` })
    })

    t.test('redelivery: the same event twice → one task', async (t) => {
      const wf = await w.started()
      const pickup = wf.tasks[0]
      await w.transition(pickup.ulid, 'complete')
      await waitWorkflow(h, token, wf.id, (x) => x.tasks.length === 2, 'the delivery task')
      const completed = (await h.platform.store.readStream(`task-${pickup.ulid}`)).find((e) => e.type === 'TaskCompleted')!
      const message = eventMessage(completed)
      // A copy under another message id (a replay): the bus's own dedup does not catch it, the action keys do.
      await bg.bus.publish([{ ...message, id: `${message.id}-again`, headers: { [BUS_HEADERS.replayOf]: message.id } }])
      await new Promise((r) => setTimeout(r, 500))
      const after = await waitWorkflow(h, token, wf.id, () => true, 'read')
      t.equal(after.tasks.length, 2, 'still one delivery task')
      const events = await h.platform.store.readStream(`workflow-${wf.id}`)
      t.equal(events.filter((e) => e.type === 'WorkflowTaskCreated').length, 2)
    })

    t.test('cancel: open tasks cancelled, and a late outcome runs nothing', async (t) => {
      const wf = await w.started({ blueprint_key: 'delivery', data: { destination: newAddress() } })
      const res = await h.call('POST', `/api/v1/workflows/${wf.id}/cancel`, { token })
      t.equal(res.json().data.workflow.tasks[0].status, 'cancelled')
      const before = (await h.platform.store.readStream(`workflow-${wf.id}`)).length
      // An outcome that arrives anyway (a replayed fail of the cancelled task): nothing runs.
      const fake = { ...eventMessage((await h.platform.store.readStream(`task-${wf.tasks[0].ulid}`)).at(-1)!) }
      await bg.bus.publish([{ ...fake, id: `${fake.id}-x`, data: { ...fake.data, type: 'TaskFailed' }, subject: fake.subject.replace('TaskCancelled', 'TaskFailed') }])
      await new Promise((r) => setTimeout(r, 500))
      t.equal((await h.platform.store.readStream(`workflow-${wf.id}`)).length, before, 'no retry task after cancel')
      t.equal((await w.get(wf.id)).status, 'cancelled')
    })

    t.test('emit_event, start_workflow, complete_workflow', async (t) => {
      await w.publish({
        key: `chain-${suffix}`, name: 'Chain',
        steps: [{ key: 'inspect', name: 'Inspect', task: { type: 'inspection', address: 'origin' }, on_complete: [{ do: 'emit_event', event: 'inspected' }, { do: 'start_workflow', blueprint_key: 'delivery' }, { do: 'complete_workflow' }] }],
        start_steps: ['inspect'],
      })
      const rx = await startReceiver(t)
      const hook = await h.call('POST', '/api/v1/webhooks', { token, body: { url: rx.url, events: ['custom.inspected', 'workflow.completed'] } })
      t.equal(hook.statusCode, 201, hook.body)
      const wf = await w.started({ blueprint_key: `chain-${suffix}`, data: { origin: newAddress(), destination: newAddress() } })
      await w.transition(wf.tasks[0].ulid, 'complete')
      await until(() => rx.received.length === 2, 10_000, 'custom.inspected and workflow.completed delivered')
      const types = rx.received.map((r) => JSON.parse(r.body)).map((b: { type: string; data: { id: number } }) => [b.type, b.data.id]).sort()
      t.same(types, [['custom.inspected', wf.id], ['workflow.completed', wf.id]], 'emit_event goes out through the organization webhooks')
      const done = await waitWorkflow(h, token, wf.id, (x) => x.status === 'completed', 'completed')
      t.type((done as unknown as { completed_at: string }).completed_at, 'string')
      const events = await h.platform.store.readStream(`workflow-${wf.id}`)
      t.match(events.find((e) => e.type === 'WorkflowEventEmitted')?.data, { event: 'inspected' })
      const started = events.find((e) => e.type === 'WorkflowActionTaken' && (e.data as { do: string }).do === 'start_workflow')!
      const otherId = Number(/started workflow (\d+)/.exec((started.data as { outcome: string }).outcome)![1])
      const other = await w.get(otherId)
      t.match(other, { blueprint: { key: 'delivery' }, status: 'new', tasks: [{ step_key: 'delivery' }] })
    })

  })
}

t.test('process manager contract: redelivery, a crash between two actions, parking (direct deliveries)', async (t) => {
  const h = await build(t)
  const w = await workflowsWorld(h)
  const { WorkflowManager } = await import('../../src/processes/workflow-manager.js')
  const { createBus } = await import('../../src/infrastructure/bus/create-bus.js')
  const bus = await createBus({ db: h.platform.database, logger: silentLogger })
  t.teardown(() => bus.close())
  let crashAfter: string | null = null
  const ran: string[] = []
  const manager = new WorkflowManager(h.platform, {
    bus,
    afterAction: (key) => {
      ran.push(key)
      if (key === crashAfter) { crashAfter = null; throw new Error('killed between two actions') }
    },
  })
  const deliver = async (ulid: string, type: string, attempt = 1, maxDeliveries = 5) => {
    const e = (await h.platform.store.readStream(`task-${ulid}`)).find((x) => x.type === type)!
    const m = eventMessage(e)
    let dead: string | null = null
    await manager.handle({
      id: m.id, subject: m.subject, data: m.data, key: m.key, headers: {}, publishedAt: new Date(), consumer: 'workflow-manager', attempt, maxDeliveries,
      ack() {}, nak() {}, deadLetter(reason: string) { dead = reason },
    })
    return dead
  }
  const taskCompleted = async (ulid: string) => {
    const res = await w.transition(ulid, 'complete')
    if (res.statusCode !== 200) throw new Error(res.body)
  }
  await w.publish({
    key: 'three-actions', name: 'Three actions',
    steps: [
      { key: 'a', name: 'A', task: { type: 'service', address: 'origin' }, on_complete: [{ do: 'emit_event', event: 'a_done' }, { do: 'create_task', step: 'b' }, { do: 'emit_event', event: 'b_made' }] },
      { key: 'b', name: 'B', task: { type: 'service', address: 'origin' }, depends_on: ['a'], on_complete: [{ do: 'complete_workflow' }] },
    ],
    start_steps: ['a'],
  })

  t.test('a crash after the first action resumes with the second and repeats none; a redelivery does nothing', async (t) => {
    const wf = await w.started({ blueprint_key: 'three-actions', data: { origin: newAddress() } })
    const a = wf.tasks[0].ulid
    await taskCompleted(a)
    const key = (i: number) => `workflow:${wf.id}:step:a:attempt:1:action:${i}`
    crashAfter = key(0)
    await t.rejects(deliver(a, 'TaskCompleted'), /killed between two actions/)
    t.same(ran, [key(0)])
    await deliver(a, 'TaskCompleted', 2)
    t.same(ran, [key(0), key(1), key(2)], 'resumed at the second action')
    await deliver(a, 'TaskCompleted', 3)
    t.same(ran, [key(0), key(1), key(2)], 'a redelivery runs nothing')
    const events = await h.platform.store.readStream(`workflow-${wf.id}`)
    // The outcome records the start it stands for (the complete's skipped TaskStarted is passed over) with its first action.
    t.same(events.map((e) => e.type), ['WorkflowCreated', 'WorkflowTaskCreated', 'WorkflowProgressed', 'WorkflowEventEmitted', 'WorkflowTaskCreated', 'WorkflowEventEmitted'])
    const b = (events[4]!.data as { ulid: string }).ulid
    t.equal((await w.get(wf.id)).tasks.length, 2)
    await taskCompleted(b)
    await deliver(b, 'TaskCompleted')
    t.equal((await w.get(wf.id)).status, 'completed')
  })

  t.test('a skipped start is passed over; the arrival it came with, or the outcome, marks the workflow in progress', async (t) => {
    const wf = await w.started({ blueprint_key: 'three-actions', data: { origin: newAddress() } })
    const a = wf.tasks[0].ulid
    const arrived = await w.transition(a, 'arrive')
    t.equal(arrived.statusCode, 200, arrived.body)
    const before = (await h.platform.store.readStream(`workflow-${wf.id}`)).length
    await deliver(a, 'TaskStarted')
    t.equal((await h.platform.store.readStream(`workflow-${wf.id}`)).length, before, 'the skipped start recorded nothing')
    await deliver(a, 'TaskArrived')
    const events = await h.platform.store.readStream(`workflow-${wf.id}`)
    t.same(events.slice(before).map((e) => e.type), ['WorkflowProgressed'], 'the arrival did')
    t.equal((await w.get(wf.id)).status, 'in_progress')
    await deliver(a, 'TaskArrived', 2)
    t.equal((await h.platform.store.readStream(`workflow-${wf.id}`)).length, events.length, 'only forward: a redelivery records nothing')
  })

  t.test('a failing action: retried (thrown), then parked on its last delivery and shown on the workflow', async (t) => {
    await w.publish({ key: 'origin-only', name: 'O', steps: [{ key: 'p', name: 'P', task: { type: 'pickup', address: 'origin' } }], start_steps: ['p'] })
    await w.publish({
      key: 'parking', name: 'Parking',
      steps: [{ key: 'd', name: 'D', task: { type: 'delivery', address: 'destination' }, on_complete: [{ do: 'start_workflow', blueprint_key: 'origin-only' }, { do: 'complete_workflow' }] }],
      start_steps: ['d'],
    })
    const wf = await w.started({ blueprint_key: 'parking', data: { destination: newAddress() } })
    const d = wf.tasks[0].ulid
    await taskCompleted(d)
    await t.rejects(deliver(d, 'TaskCompleted', 1, 3), 'the action fails: the bus will retry')
    t.same((await w.get(wf.id)).errors, [], 'not parked before the last delivery')
    await t.rejects(deliver(d, 'TaskCompleted', 3, 3))
    const parked = await w.get(wf.id)
    t.equal(parked.errors.length, 1)
    t.match(parked.errors[0], { action_key: `workflow:${wf.id}:step:d:attempt:1:action:0`, error: /origin/ })
    t.equal(parked.status, 'in_progress', 'the actions after it did not run (not completed; the park recorded the outcome\'s start)')
  })
})

t.test('dead letters of the manager show in /metrics (in-process bus, short delays)', async (t) => {
  const h = await build(t)
  const w = await workflowsWorld(h)
  const { WorkflowManager } = await import('../../src/processes/workflow-manager.js')
  const { createBus } = await import('../../src/infrastructure/bus/create-bus.js')
  const { Relay } = await import('../../src/processes/relay.js')
  const bus = await createBus({ db: h.platform.database, logger: silentLogger })
  const relay = new Relay(h.platform.database.dedicated('relay', 2), h.platform.store, bus, { logger: silentLogger })
  const manager = new WorkflowManager(h.platform, { bus, maxDeliveries: 2, retryDelaysMs: [30] })
  await manager.start()
  await relay.start()
  t.teardown(async () => { await manager.stop(); await relay.stop(); await bus.close() })
  await w.publish({ key: 'origin-only', name: 'O', steps: [{ key: 'p', name: 'P', task: { type: 'pickup', address: 'origin' } }], start_steps: ['p'] })
  await w.publish({
    key: 'parking', name: 'Parking',
    steps: [{ key: 'd', name: 'D', task: { type: 'delivery', address: 'destination' }, on_complete: [{ do: 'start_workflow', blueprint_key: 'origin-only' }] }],
    start_steps: ['d'],
  })
  const wf = await w.started({ blueprint_key: 'parking', data: { destination: newAddress() } })
  await w.transition(wf.tasks[0].ulid, 'complete')
  const parked = await waitWorkflow(h, w.carrier.token, wf.id, (x) => x.errors.length === 1, 'parked')
  t.match(parked.errors[0], { action_key: `workflow:${wf.id}:step:d:attempt:1:action:0` })
  await until(async () => ((await collectBusMetrics(h.platform.db, bus)).consumers.find((c) => c.name === 'workflow-manager')?.deadLetters ?? 0) === 1, 5000, 'the dead letter')
  const metrics = await h.call('GET', '/metrics')
  t.equal(metrics.statusCode === 200 || metrics.statusCode === 401 || metrics.statusCode === 403, true)
})

if (natsUrl) {
  t.test('two API processes sharing one NATS: each action once', async (t) => {
    const h = await build(t, { natsUrl })
    if (h.platform.database.kind !== 'postgres') return t.pass('one process per embedded database')
    const w = await workflowsWorld(h)
    const suffix = randomBytes(4).toString('hex')
    const nats = { streamName: `WF2_${suffix}`, subjectPrefix: `wf2${suffix}` }
    const second = await createPlatform(h.platform.config, { database: await secondConnection(t, h.platform.database) })
    t.teardown(() => second.close())
    const bgs = [await startBackground(h.platform, silentLogger, { nats }), await startBackground(second, silentLogger, { nats })]
    t.teardown(async () => { for (const bg of bgs) await bg.stop() })
    const wfs = await Promise.all(Array.from({ length: 6 }, () => w.started()))
    await Promise.all(wfs.map((wf) => w.transition(wf.tasks[0].ulid, 'complete')))
    for (const wf of wfs) {
      await waitWorkflow(h, w.carrier.token, wf.id, (x) => x.tasks.length === 2, `delivery of ${wf.id}`)
      // Replays and the other process's copy race for the same keys: still exactly one.
      const completed = (await h.platform.store.readStream(`task-${wf.tasks[0].ulid}`)).find((e) => e.type === 'TaskCompleted')!
      const m = eventMessage(completed)
      await bgs[1]!.bus.publish([{ ...m, id: `${m.id}-p2`, headers: { [BUS_HEADERS.replayOf]: m.id } }])
    }
    await new Promise((r) => setTimeout(r, 800))
    for (const wf of wfs) {
      const events = await h.platform.store.readStream(`workflow-${wf.id}`)
      t.equal(events.filter((e) => e.type === 'WorkflowTaskCreated').length, 2, `workflow ${wf.id}: one delivery task`)
    }
  })
}
