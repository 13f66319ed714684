import t from 'tap'
import { build, type TestApp } from '../helpers/build.js'
import { createShipment } from '../notifications/fixtures/shipments.js'

// The `updated_since` listing (spec: "neither skipped nor repeated"; DESIGN §2 change feed). The
// change sequence follows commit order while `updated_at` is the command's clock, so a command that
// read the clock later can commit earlier: these tests make that inversion certain by giving the
// platform a clock that runs backwards while the shipments are created.

const T0 = Date.parse('2026-06-01T12:00:00.000Z')
const at = (s: number) => new Date(T0 + s * 1000)

async function freshCarrier(h: TestApp, name: string) {
  const org = await h.createOrganization({ roles: ['carrier'], carriers_enabled: true })
  const made = (await h.call('POST', '/api/v1/carriers', { token: org.token, body: { name, integration: 'custom', visibility: 'private' } })).json()
  return { id: made.carrier.id as string, key: made.api_key as string }
}

/** Pages the carrier's feed from `first` to the first empty page; returns every listed item in order. */
async function pageToEnd(h: TestApp, key: string, first: string, limit: number) {
  const items: { id: number; tracking_number: string | null }[] = []
  let url = `${first}${first.includes('?') ? '&' : '?'}limit=${limit}`
  for (let guard = 0; guard < 1000; guard++) {
    const res = await h.call('GET', `/carrier/v1${url}`, { token: key })
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
    const body = res.json()
    if (body.data.length === 0) return { items, cursor: body.meta.next_cursor as string }
    items.push(...body.data)
    url = `/shipments?limit=${limit}&cursor=${body.meta.next_cursor}`
  }
  throw new Error('the feed never reached an empty page')
}

t.test('carrier feed by updated_since', async (t) => {
  const h = await build(t)
  const realClock = h.platform.clock
  t.teardown(() => { h.platform.clock = realClock })

  t.test('concurrent creates committed out of clock order are all listed, once', async (t) => {
    const c = await freshCarrier(h, 'Concurrent')
    // Every reading of the clock is a second earlier than the one before: whatever order the
    // concurrent commands commit in, most commit out of clock order.
    let tick = 0
    h.platform.clock = () => at(3600 - tick++)
    const ids = await Promise.all(Array.from({ length: 40 }, () => createShipment(h.platform, { id: c.id, integration: 'custom' })))
    h.platform.clock = realClock
    const all = ids.slice().sort((a, b) => a - b)

    const full = await pageToEnd(h, c.key, '/shipments', 7)
    t.same(full.items.map((s) => s.id).sort((a, b) => a - b), all, 'the listing without updated_since has them all')

    for (const limit of [1, 7, 100]) {
      const { items } = await pageToEnd(h, c.key, `/shipments?updated_since=${at(0).toISOString()}`, limit)
      const listed = items.map((s) => s.id)
      t.same(listed.slice().sort((a, b) => a - b), all, `updated_since before all of them lists every one (limit ${limit})`)
      t.equal(new Set(listed).size, listed.length, `none twice (limit ${limit})`)
    }
  })

  t.test('the first page is exact: an older unchanged row is not listed, a newer one committed first is', async (t) => {
    const c = await freshCarrier(h, 'Exact')
    h.platform.clock = () => at(20)
    const newer = await createShipment(h.platform, { id: c.id, integration: 'custom' })
    h.platform.clock = () => at(5)
    const older = await createShipment(h.platform, { id: c.id, integration: 'custom' })
    h.platform.clock = () => at(15)
    const middle = await createShipment(h.platform, { id: c.id, integration: 'custom' })
    h.platform.clock = realClock

    const since = (s: number) => `/shipments?updated_since=${at(s).toISOString()}`
    t.same((await pageToEnd(h, c.key, since(0), 1)).items.map((s) => s.id), [newer, older, middle], 'all three, in commit order')
    t.same((await pageToEnd(h, c.key, since(10), 1)).items.map((s) => s.id), [newer, middle], 'not the one updated before updated_since')
    t.same((await pageToEnd(h, c.key, since(18), 5)).items.map((s) => s.id), [newer])
    const none = await pageToEnd(h, c.key, since(30), 5)
    t.same(none.items, [], 'nothing since then')
    // The empty answer's cursor polls on from the head: the next change is listed.
    h.platform.clock = () => at(40)
    t.equal((await h.call('PUT', `/carrier/v1/shipments/${older}/tracking`, { token: c.key, body: { tracking_number: 'TRK-OLD' } })).statusCode, 200)
    h.platform.clock = realClock
    const polled = await pageToEnd(h, c.key, `/shipments?cursor=${none.cursor}`, 5)
    t.same(polled.items.map((s) => [s.id, s.tracking_number]), [[older, 'TRK-OLD']], 'polling the cursor finds the change')
  })

  t.test('a row that changes while the client pages is listed again, even if its clock is behind updated_since', async (t) => {
    const c = await freshCarrier(h, 'Paging')
    h.platform.clock = () => at(100)
    const a = await createShipment(h.platform, { id: c.id, integration: 'custom' })
    const b = await createShipment(h.platform, { id: c.id, integration: 'custom' })
    h.platform.clock = () => at(10)
    const old = await createShipment(h.platform, { id: c.id, integration: 'custom' })
    h.platform.clock = realClock

    const p1 = (await h.call('GET', `/carrier/v1/shipments?limit=1&updated_since=${at(50).toISOString()}`, { token: c.key })).json()
    t.same(p1.data.map((s: any) => s.id), [a])
    // Two changes commit after the listing started: `a` (already listed) and `old` (not listed: it
    // was last updated before updated_since), both by a server whose clock is behind the client's.
    h.platform.clock = () => at(30)
    for (const [id, trk] of [[a, 'TRK-A'], [old, 'TRK-OLD']] as const) {
      t.equal((await h.call('PUT', `/carrier/v1/shipments/${id}/tracking`, { token: c.key, body: { tracking_number: trk } })).statusCode, 200)
    }
    h.platform.clock = realClock
    const rest = await pageToEnd(h, c.key, `/shipments?cursor=${p1.meta.next_cursor}`, 1)
    t.same(rest.items.map((s) => [s.id, s.tracking_number]), [[b, null], [a, 'TRK-A'], [old, 'TRK-OLD']],
      'the unchanged one once, then both changes with their new state')
  })
})
