import t from 'tap'
import { ShipmentViewCache, type ViewCacheOptions } from '../../src/shipments/view-cache.js'
import { type ChangeNotice, encodeChangeNotice } from '../../projections/change-notices.js'
import { ReadModelChanges } from '../../projections/read-model-changes.js'
import { SHIPMENT_ROWS, STATUS_CATALOGS } from '../../projections/shipments/shipments-projection.js'

const change = (batch: string, ids: number[], organizations: string[] = []): ChangeNotice =>
  ({ batch, keys: { [SHIPMENT_ROWS]: ids, [STATUS_CATALOGS]: organizations }, whole: [], everything: false })

/** A view cache following a process's notices: `announced` as the runner does it, `notified` as the NOTIFY arrives. */
async function following(opts: ViewCacheOptions & { unsettledMs?: number } = {}) {
  const cache = new ShipmentViewCache(opts)
  const changes = new ReadModelChanges(undefined, opts.unsettledMs)
  await changes.subscribe(cache.subscriber)
  return Object.assign(cache, {
    announced: (n: ChangeNotice) => changes.announce(n),
    notified: (n: ChangeNotice | string) => changes.received(typeof n === 'string' ? n : encodeChangeNotice(n)),
    close: () => changes.close(),
  })
}

t.test('hits are per viewer organization; a notice drops the shipment for every viewer', async (t) => {
  const c = await following()
  c.set('org_a', 1, '{"id":1,"a":1}', c.begin())
  c.set('org_b', 1, '{"id":1,"b":1}', c.begin())
  c.set('org_a', 2, '{"id":2}', c.begin())
  t.equal(c.get('org_a', 1), '{"id":1,"a":1}')
  t.equal(c.get('org_b', 1), '{"id":1,"b":1}')
  t.equal(c.get('org_c', 1), undefined, 'another organization never gets another viewer\'s entry')
  c.notified(change('x.1', [1]))
  t.equal(c.get('org_a', 1), undefined)
  t.equal(c.get('org_b', 1), undefined)
  t.equal(c.get('org_a', 2), '{"id":2}', 'other shipments stay')
})

t.test('a catalog change drops every view its organization sees, only those', async (t) => {
  const c = await following()
  c.set('org_a', 1, 'a1', c.begin())
  c.set('org_b', 1, 'b1', c.begin())
  c.set('org_a', 2, 'a2', c.begin())
  c.notified(change('x.1', [], ['org_a']))
  t.equal(c.get('org_a', 1), undefined)
  t.equal(c.get('org_a', 2), undefined)
  t.equal(c.get('org_b', 1), 'b1')
})

t.test('"everything" (an unreadable notice, a LISTEN reconnect) clears', async (t) => {
  const c = await following()
  c.set('org_a', 1, 'a1', c.begin())
  c.notified('')
  t.equal(c.size, 0)
})

t.test('a read that started before an invalidation does not fill', async (t) => {
  const c = await following()
  const g = c.begin()
  c.notified(change('x.1', [7]))
  c.set('org_a', 1, 'stale', g)
  t.equal(c.get('org_a', 1), undefined)
  c.set('org_a', 1, 'fresh', c.begin())
  t.equal(c.get('org_a', 1), 'fresh')
})

t.test('an announced batch: no hit and no fill for its shipments until its own notice', async (t) => {
  const c = await following()
  c.set('org_a', 1, 'before', c.begin())
  c.set('org_a', 2, 'two', c.begin())
  c.announced(change('p.1', [1]))
  t.equal(c.get('org_a', 1), undefined, 'dropped before the commit')
  c.set('org_a', 1, 'read before the commit', c.begin())
  t.equal(c.get('org_a', 1), undefined, 'not filled while unsettled')
  t.equal(c.get('org_a', 2), 'two', 'other shipments are still served')
  const g = c.begin()
  c.notified(change('other.9', [5]))
  c.set('org_a', 1, 'still unsettled', c.begin())
  t.equal(c.get('org_a', 1), undefined, 'another batch\'s notice does not settle it')
  c.notified(change('p.1', [1]))
  c.set('org_a', 1, 'read before the notice', g)
  t.equal(c.get('org_a', 1), undefined, 'a read that ran while unsettled does not fill')
  c.set('org_a', 1, 'after', c.begin())
  t.equal(c.get('org_a', 1), 'after')
})

t.test('a batch too big for one NOTIFY drops its shipments whole, and still settles its announcement', async (t) => {
  const c = await following()
  c.set('org_a', 1, 'one', c.begin())
  c.set('org_b', 2, 'two', c.begin())
  const big = change('p.2', Array.from({ length: 2_000 }, (_, i) => 10_000_000 + i), ['org_b'])
  c.announced(big)
  c.notified(big)
  t.equal(c.size, 0, 'every view dropped')
  c.set('org_a', 10_000_000, 'fills again', c.begin())
  t.equal(c.get('org_a', 10_000_000), 'fills again', 'the hold of its ids ended with its notice')
})

t.test('an announced batch whose notice never comes settles after unsettledMs', async (t) => {
  const c = await following({ unsettledMs: 20 })
  c.announced(change('p.1', [1], ['org_b']))
  c.set('org_a', 1, 'x', c.begin())
  c.set('org_b', 3, 'y', c.begin())
  t.equal(c.get('org_a', 1), undefined)
  t.equal(c.get('org_b', 3), undefined)
  await new Promise((r) => setTimeout(r, 40))
  c.set('org_a', 1, 'x', c.begin())
  c.set('org_b', 3, 'y', c.begin())
  t.equal(c.get('org_a', 1), 'x')
  t.equal(c.get('org_b', 3), 'y')
  c.close()
})

t.test('entries expire after ttlMs; when full the oldest fill goes first', async (t) => {
  let now = 1_000
  const c = await following({ ttlMs: 100, maxEntries: 2, now: () => now })
  c.set('o', 1, 'one', c.begin())
  c.set('o', 2, 'two', c.begin())
  t.equal(c.get('o', 1), 'one')
  c.set('o', 3, 'three', c.begin())
  t.equal(c.size, 2)
  t.equal(c.get('o', 1), undefined, 'the oldest was evicted')
  t.equal(c.get('o', 2), 'two')
  now += 100
  t.equal(c.get('o', 2), undefined, 'expired')
})


t.test('SHIPMENT_VIEW_CACHE_ENTRIES sizes it: N keeps the newest N fills, 0 keeps none', async (t) => {
  const two = await following({ maxEntries: 2 })
  for (const id of [1, 2, 3]) two.set('org_a', id, `s${id}`, two.begin())
  t.same([1, 2, 3].map((id) => two.get('org_a', id)), [undefined, 's2', 's3'])
  const none = await following({ maxEntries: 0 })
  none.set('org_a', 1, 's1', none.begin())
  t.equal(none.get('org_a', 1), undefined)
  t.equal(none.size, 0)
})
