import t from 'tap'
import { build } from '../../helpers/build.js'
import { listen, openSse, progressWorld } from './fixtures.js'

t.test('reconnecting with Last-Event-ID while changes keep coming: every feed row exactly once, in order', async (t) => {
  const h = await build(t, { sseHeartbeatMs: 60_000 })
  const base = await listen(h.app)
  const w = await progressWorld(h)
  const ulids = await w.tasks(12)
  const id = await w.route({ tasks: ulids, publish: true })
  const url = `${base}/api/v1/routes/${id}/progress/stream`
  const auth = { authorization: `Bearer ${w.carrier.token}` }

  const first = await openSse(url, auth)
  await first.until((e) => e.some((x) => x.event === 'snapshot'))
  first.close()
  const start = Number(first.events.find((x) => x.event === 'snapshot')!.id)
  let last = start
  const seen: number[] = []
  const collect = (events: { id?: string; event?: string }[]) => {
    for (const e of events) if (e.id !== undefined && e.event !== 'snapshot') { seen.push(Number(e.id)); last = Number(e.id) }
  }

  // Changes in parallel (start then complete or cancel each task), while the reader drops and resumes.
  let done = false
  // Three lanes of four tasks each, one change at a time per lane, paced so the reader reconnects in between.
  const changes = Promise.all([0, 1, 2].map(async (lane) => {
    for (let i = lane; i < ulids.length; i += 3) {
      await w.transition(ulids[i]!, 'start')
      await new Promise((r) => setTimeout(r, 60))
      await w.transition(ulids[i]!, i % 3 === 0 ? 'cancel' : 'complete', i % 3 === 0 ? {} : { signed_by: 'Ana' })
      await new Promise((r) => setTimeout(r, 60))
    }
  })).finally(() => { done = true })
  let rounds = 0
  let during = 0
  while (!done || rounds < 3) {
    if (!done) during++
    const s = await openSse(url, { ...auth, 'last-event-id': String(last) })
    await new Promise((r) => setTimeout(r, 30 + (rounds % 4) * 40))
    s.close()
    collect(s.events)
    rounds++
  }
  await changes
  const tail = await openSse(url, { ...auth, 'last-event-id': String(last) })
  await new Promise((r) => setTimeout(r, 500))
  tail.close()
  collect(tail.events)
  t.ok(during >= 3, `${during} of ${rounds} connections while the changes were coming`)

  const rows = await h.platform.rm.selectFrom('route_feed').select('seq').where('route_id', '=', id).orderBy('seq').execute()
  const expected = rows.map((r) => Number(r.seq)).filter((x) => x > start)
  t.equal(expected.length, 24, 'a start and an end for each of the 12 tasks after the snapshot')
  t.same(seen, expected, 'every row once, in order, across the reconnects')
})
