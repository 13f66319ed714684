// Sampled (src/shared/sampled.ts): what /ready and /metrics read their figures through. A reader
// never waits past its bound, a hung probe reads as a failure once past its timeout, and a slow
// probe within its timeout leaves the previous reading in place.
import t from 'tap'
import { Sampled } from '../../src/shared/sampled.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

t.test('a probe that answers in time: its value, fresh', async (t) => {
  let n = 0
  const s = new Sampled(async () => ++n, { timeoutMs: 500 })
  const r = await s.read(200)
  t.match(r, { ok: true, value: 1 })
  t.match(await s.read(200), { ok: true, value: 2 }, 'each read probes again (no freshMs)')
})

t.test('a hung probe: the reader waits its bound only, then the failure is the reading', async (t) => {
  let hang = false
  const s = new Sampled(async () => { if (hang) await new Promise(() => {}); return 'up' }, { timeoutMs: 300 })
  t.match(await s.read(200), { ok: true, value: 'up' })
  hang = true
  const started = Date.now()
  const within = await s.read(100)
  t.ok(Date.now() - started < 250, 'the read returned at its bound')
  t.match(within, { ok: true, value: 'up' }, 'within the timeout: the previous reading, with its time')
  await sleep(250)
  const after = await s.read(100)
  t.match(after, { ok: false, error: 'no answer within 300 ms', lastOk: { value: 'up' } }, 'past the timeout: a failure naming it')
  // The next probe starts (the hung one given up); the failure stays the reading meanwhile.
  t.match(s.current(), { ok: false })
  hang = false
  await sleep(350)
  t.match(await s.read(200), { ok: true, value: 'up' }, 'a probe that answers again ends it')
})

t.test('a failing probe: its error, and the last good value beside it', async (t) => {
  let fail = false
  const s = new Sampled(async () => { if (fail) throw new Error('connection refused'); return 7 }, { timeoutMs: 300 })
  await s.read(100)
  fail = true
  t.match(await s.read(100), { ok: false, error: 'connection refused', lastOk: { value: 7 } })
})

t.test('freshMs: a recent reading is returned without a new probe', async (t) => {
  let n = 0
  const s = new Sampled(async () => ++n, { timeoutMs: 300, freshMs: 10_000 })
  await s.read(100)
  await s.read(100)
  t.equal(n, 1)
})
