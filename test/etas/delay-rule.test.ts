import t from 'tap'
import { decideDelay, evolveDelay, type DelayWatch, type EtaSeen } from '../../src/etas/delay-rule.js'

// DESIGN §3.10, the engine's delay rule alone: given what it remembers of a task / when an ETA is
// computed / then a DelayTask request, a back-on-time notice (or nothing), and the task re-armed once
// back inside. No database.

const min = 60_000
const windowTo = Date.parse('2026-11-29T10:00:00Z')
const threshold = 15 * min
const seen = (lateMin: number | null, now: number, window: EtaSeen['window'] = { from: windowTo - 60 * min, to: windowTo }): EtaSeen =>
  ({ ulid: 'T1', organizationId: 'org_1', at: windowTo + (lateMin ?? 0) * min, window, lateMs: lateMin === null ? null : lateMin * min, now, lateSince: now - 2 * min })
const given = (watch: DelayWatch) => ({
  when: (s: EtaSeen) => ({ outputs: decideDelay(s, watch, threshold), watch: evolveDelay(watch, s) }),
})
const fresh: DelayWatch = { delayedAt: null, backInsideAt: null }
const t0 = windowTo - 30 * min

t.test('late by the threshold for the first time: a request naming the ETA, the window\'s end and the minutes late', async (t) => {
  const { outputs, watch } = given(fresh).when(seen(20, t0))
  t.same(outputs, [{ action: 'Send', message: { ulid: 'T1', organizationId: 'org_1', eta: windowTo + 20 * min, windowTo, minutesLate: 20, backInsideAt: null, now: t0, lateSince: t0 - 2 * min } }])
  t.same(watch, fresh, 'asking changes nothing here: the delay is remembered once the log has it')
})

t.test('not late enough, no window, or no comparable ETA: nothing', async (t) => {
  t.match(given(fresh).when(seen(14, t0)).outputs, [{ action: 'Ignore', reason: /threshold/ }])
  t.match(given(fresh).when(seen(30, t0, null)).outputs, [{ action: 'Ignore', reason: /no window/ }])
  t.match(given(fresh).when(seen(null, t0)).outputs, [{ action: 'Ignore', reason: /no window/ }])
})

t.test('delayed already: nothing more until an ETA comes back inside the window, which re-arms it', async (t) => {
  const delayed: DelayWatch = { delayedAt: t0, backInsideAt: null }
  t.match(given(delayed).when(seen(40, t0 + 5 * min)).outputs, [{ action: 'Ignore', reason: /delayed already/ }])
  t.same(given(delayed).when(seen(1, t0 + 5 * min)).watch, delayed, 'still late (by less): not back inside')
  const back = given(delayed).when(seen(0, t0 + 6 * min))
  t.same(back.watch, { delayedAt: t0, backInsideAt: t0 + 6 * min }, 'at the window\'s end counts as inside')
  t.same(back.outputs, [{ action: 'BackOnTime', message: { ulid: 'T1', eta: windowTo, windowTo, delayedAt: t0, now: t0 + 6 * min } }], 'and says so: task.back_on_time')
  const again = given(back.watch).when(seen(25, t0 + 9 * min))
  t.same(again.outputs, [{ action: 'Send', message: { ulid: 'T1', organizationId: 'org_1', eta: windowTo + 25 * min, windowTo, minutesLate: 25, backInsideAt: t0 + 6 * min, now: t0 + 9 * min, lateSince: t0 + 7 * min } }],
    'the next episode, named by when it came back')
  t.same(given(back.watch).when(seen(-5, t0 + 10 * min)).watch, back.watch, 'armed already: coming back again changes nothing')
})
