import fc from 'fast-check'
import t from 'tap'
import { build } from '../helpers/build.js'
import { silentLogger } from '../../src/infrastructure/bus/bus.js'
import { createBus } from '../../src/infrastructure/bus/create-bus.js'
import { eventMessage } from '../../src/processes/relay.js'
import { WorkflowManager } from '../../src/processes/workflow-manager.js'
import { attemptsOf, fold, pendingActions } from '../../src/workflows/workflow.js'
import type { Step } from '../../schemas/api/blueprints.js'
import { newAddress, workflowsWorld } from './fixtures.js'

// Random valid blueprints (a chain of steps, each reached by a create_task of the one before, with
// random extra actions) run by the real process manager on a real database, with random task
// outcomes, redeliveries and cancels. Invariants: no task twice for one (step, attempt); a workflow
// ends final when an outcome's actions say so; nothing is recorded after a cancel.

type Extra = { do: 'emit_event'; event: string } | { do: 'retry'; max_attempts: number } | { do: 'complete_workflow' } | { do: 'fail_workflow' } | { do: 'cancel_remaining_tasks' }
const extra: fc.Arbitrary<Extra> = fc.oneof(
  fc.constantFrom('a', 'b').map((event) => ({ do: 'emit_event' as const, event })),
  fc.integer({ min: 1, max: 3 }).map((max_attempts) => ({ do: 'retry' as const, max_attempts })),
  fc.constant({ do: 'complete_workflow' as const }),
  fc.constant({ do: 'fail_workflow' as const }),
  fc.constant({ do: 'cancel_remaining_tasks' as const }),
)
const stepsArb = fc.integer({ min: 1, max: 3 }).chain((n) => fc.tuple(
  ...Array.from({ length: n }, () => fc.record({ complete: fc.array(extra, { maxLength: 3 }), fail: fc.array(extra, { maxLength: 3 }), createAt: fc.nat(3) })),
).map((specs): Step[] => specs.map((s, i) => {
  const onComplete: Step['on_complete'] = [...s.complete]
  if (i + 1 < specs.length) onComplete.splice(Math.min(s.createAt, onComplete.length), 0, { do: 'create_task', step: `s${i + 1}` })
  return { key: `s${i}`, name: `S${i}`, task: { type: 'service', address: 'origin' }, on_complete: onComplete, on_fail: s.fail }
})))
const outcomesArb = fc.array(fc.record({ pick: fc.nat(10), outcome: fc.constantFrom('complete', 'fail', 'cancel'), twice: fc.boolean() }), { minLength: 1, maxLength: 8 })

t.test('random blueprints and outcomes keep the invariants', async (t) => {
  const h = await build(t)
  const w = await workflowsWorld(h)
  const bus = await createBus({ db: h.platform.database, logger: silentLogger })
  t.teardown(() => bus.close())
  const manager = new WorkflowManager(h.platform, { bus })
  const token = w.carrier.token
  let run = 0
  const deliver = async (ulid: string, type: string) => {
    const e = (await h.platform.store.readStream(`task-${ulid}`)).filter((x) => x.type === type).at(-1)!
    const m = eventMessage(e)
    await manager.handle({ id: m.id, subject: m.subject, data: m.data, key: m.key, headers: {}, publishedAt: new Date(), consumer: 'workflow-manager', attempt: 1, maxDeliveries: 5, ack() {}, nak() {}, deadLetter() {} })
  }

  await fc.assert(fc.asyncProperty(stepsArb, outcomesArb, async (steps, outcomes) => {
    const key = `prop-${++run}`
    await w.publish({ key, name: key, steps, start_steps: ['s0'] })
    const wf = await w.started({ blueprint_key: key, data: { origin: newAddress() } })
    let cancelledAt: number | null = null
    for (const o of outcomes) {
      const state = fold(await h.platform.store.readStream(`workflow-${wf.id}`))
      if (state.status === 'completed' || state.status === 'failed' || state.status === 'cancelled') break
      if (o.outcome === 'cancel') {
        await h.call('POST', `/api/v1/workflows/${wf.id}/cancel`, { token })
        cancelledAt = (await h.platform.store.readStream(`workflow-${wf.id}`)).length
        continue
      }
      const open = (await w.get(wf.id)).tasks.filter((x: { status: string }) => x.status === 'pending')
      if (!open.length) break
      const task = open[o.pick % open.length]
      const outcome = o.outcome === 'complete' ? 'complete' : 'failed'
      // What the blueprint says this outcome does: a final action reached before a retry that still has attempts.
      let expectFinal = false
      for (const p of pendingActions(state, steps, task.ulid, outcome)) {
        if (p.action.do === 'retry' && attemptsOf(state, p.step.key) < (p.action.max_attempts ?? 1)) break
        if (p.action.do === 'complete_workflow' || p.action.do === 'fail_workflow') { expectFinal = true; break }
      }
      const res = await w.transition(task.ulid, o.outcome === 'complete' ? 'complete' : 'fail', o.outcome === 'complete' ? undefined : { reason: 'other' })
      if (res.statusCode !== 200) throw new Error(res.body)
      await deliver(task.ulid, outcome === 'complete' ? 'TaskCompleted' : 'TaskFailed')
      if (o.twice) await deliver(task.ulid, outcome === 'complete' ? 'TaskCompleted' : 'TaskFailed')
      const after = fold(await h.platform.store.readStream(`workflow-${wf.id}`))
      if (expectFinal && !['completed', 'failed', 'cancelled'].includes(after.status ?? '')) throw new Error(`expected a final state after ${outcome} of ${task.step_key}, got ${after.status}`)
    }
    const events = await h.platform.store.readStream(`workflow-${wf.id}`)
    const made = events.filter((e) => e.type === 'WorkflowTaskCreated').map((e) => e.data as { step_key: string; attempt: number; ulid: string })
    const pairs = made.map((m) => `${m.step_key}#${m.attempt}`)
    if (new Set(pairs).size !== pairs.length) throw new Error(`a task made twice for one attempt: ${pairs.join(', ')}`)
    const rows = await h.platform.rm.selectFrom('tasks').select('ulid').where('workflow_id', '=', wf.id).execute()
    if (rows.length !== made.length) throw new Error(`${rows.length} task rows for ${made.length} recorded tasks`)
    if (cancelledAt !== null && events.length !== cancelledAt) throw new Error(`recorded after cancel: ${events.slice(cancelledAt).map((e) => e.type).join(', ')}`)
  }), { numRuns: Number(process.env.PROPERTY_RUNS ?? 25) })
  t.pass('invariants held')
})
