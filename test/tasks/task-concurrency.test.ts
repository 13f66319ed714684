import t from 'tap'
import { build } from '../helpers/build.js'
import { tasksWorld } from './fixtures.js'

const FINAL = new Set(['TaskCompleted', 'TaskFailed', 'TaskCancelled'])

t.test('complete and cancel of one task at once, 50 times: one final state, one final event, the loser 409', async (t) => {
  const h = await build(t)
  const w = await tasksWorld(h)
  const outcomes = { complete: 0, cancel: 0 }
  for (let i = 0; i < 50; i++) {
    const task = await w.task()
    // Half of the rounds start from `started`, so the complete also races with fewer skipped steps.
    if (i % 2) await w.transition(task.ulid, 'start')
    // Which request is sent first alternates too, so either may win.
    const complete = () => w.transition(task.ulid, 'complete', { signed_by: 'Ana' })
    const cancel = () => w.transition(task.ulid, 'cancel', { reason: 'race' }, w.dispatcher.token)
    const [completed, cancelled] = i % 4 < 2
      ? await Promise.all([complete(), cancel()])
      : await Promise.all([cancel(), complete()]).then(([b, a]) => [a, b] as const)
    const statuses = [completed.statusCode, cancelled.statusCode].sort()
    if (statuses[0] !== 200 || statuses[1] !== 409) {
      t.fail(`round ${i}: statuses ${completed.statusCode} ${completed.body} / ${cancelled.statusCode} ${cancelled.body}`)
      continue
    }
    const loser = completed.statusCode === 409 ? completed : cancelled
    if (loser.json().code !== 'task_final') t.fail(`round ${i}: the loser's code is ${loser.json().code}`)
    const winner = completed.statusCode === 200 ? 'complete' : 'cancel'
    outcomes[winner]++
    const events = await h.platform.store.readStream(`task-${task.ulid}`)
    const finals = events.filter((e) => FINAL.has(e.type))
    if (finals.length !== 1) t.fail(`round ${i}: ${finals.length} final events`)
    const expected = winner === 'complete' ? ['TaskCompleted', 'complete'] : ['TaskCancelled', 'cancelled']
    if (finals[0]?.type !== expected[0]) t.fail(`round ${i}: final event ${finals[0]?.type}, winner ${winner}`)
    const row = (await h.call('GET', `/api/v1/tasks/${task.ulid}`, { token: w.carrier.token })).json()
    if (row.status !== expected[1]) t.fail(`round ${i}: read model says ${row.status}, winner ${winner}`)
  }
  t.ok(outcomes.complete > 0 && outcomes.cancel > 0, 'both sides won some rounds')
  t.equal(outcomes.complete + outcomes.cancel, 50, `every round had one winner (complete ${outcomes.complete}, cancel ${outcomes.cancel})`)
})
