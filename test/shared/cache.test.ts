import t from 'tap'
import { Cache } from '../../src/shared/cache.js'

const deferred = <T>() => {
  let resolve!: (v: T) => void
  const promise = new Promise<T>((r) => { resolve = r })
  return { promise, resolve }
}

t.test('entries expire after ttlMs; ttl 0 stores nothing', async (t) => {
  let now = 1_000
  const c = new Cache<string, string>({ ttlMs: 100, maxEntries: 10, now: () => now })
  c.set('a', 'A', c.begin())
  now += 99
  t.equal(c.get('a'), 'A')
  now += 1
  t.equal(c.get('a'), undefined, 'expired')
  t.equal(c.size, 0, 'an expired entry is removed when met')
  const off = new Cache<string, string>({ ttlMs: 0, maxEntries: 10 })
  t.equal(off.set('a', 'A', off.begin()), false)
  t.equal(off.size, 0)
})

t.test('at most maxEntries: the oldest fill goes first, a hit does not reorder, a refill does', async (t) => {
  const c = new Cache<number, string>({ ttlMs: 60_000, maxEntries: 3 })
  for (const k of [1, 2, 3]) c.set(k, `v${k}`, c.begin())
  t.equal(c.get(1), 'v1')
  c.set(4, 'v4', c.begin())
  t.equal(c.size, 3)
  t.equal(c.get(1), undefined, 'the oldest fill went, though it was just read')
  c.set(2, 'v2 again', c.begin())
  c.set(5, 'v5', c.begin())
  t.equal(c.get(3), undefined, 'a refilled entry counts as new')
  t.equal(c.get(2), 'v2 again')
})

t.test('tags: an invalidation drops every entry of its tags, only those', async (t) => {
  const c = new Cache<string, { org: string }>({ ttlMs: 60_000, maxEntries: 10, tagsOf: (_k, v) => [v.org] })
  c.set('h1', { org: 'a' }, c.begin())
  c.set('h2', { org: 'a' }, c.begin())
  c.set('h3', { org: 'b' }, c.begin())
  c.invalidate(['a'])
  t.same([c.get('h1'), c.get('h2'), c.get('h3')], [undefined, undefined, { org: 'b' }])
  c.set('h3', { org: 'c' }, c.begin())
  c.invalidate(['b'])
  t.same(c.get('h3'), { org: 'c' }, 'a replaced entry has its new tags only')
})

t.test('generation guard: a load that began before an invalidation does not store', async (t) => {
  const c = new Cache<string, string>({ ttlMs: 60_000, maxEntries: 10, tagsOf: () => ['x'] })
  const g = c.begin()
  c.invalidate(['unrelated'])
  t.equal(c.set('k', 'stale', g), false)
  t.equal(c.get('k'), undefined)
  const g2 = c.begin()
  c.clear()
  t.equal(c.set('k', 'stale', g2), false, 'clear counts as an invalidation')
  t.equal(c.set('k', 'fresh', c.begin()), true)
  t.equal(c.get('k'), 'fresh')
})

t.test('held tags: neither served nor filled until released as often as held; loads meanwhile do not store', async (t) => {
  const c = new Cache<string, string>({ ttlMs: 60_000, maxEntries: 10, tagsOf: (k) => [k[0]!] })
  c.set('a1', 'x', c.begin())
  c.set('b1', 'y', c.begin())
  c.hold(['a'])
  c.hold(['a'])
  t.equal(c.get('a1'), undefined, 'not served')
  t.equal(c.get('b1'), 'y', 'other tags are')
  const during = c.begin()
  t.equal(c.set('a2', 'z', c.begin()), false, 'not filled')
  c.release(['a'])
  t.equal(c.set('a2', 'z', c.begin()), false, 'still held once')
  c.release(['a'])
  t.equal(c.set('a2', 'z', during), false, 'a load that ran while held does not store')
  t.equal(c.set('a2', 'z', c.begin()), true)
  t.equal(c.get('a2'), 'z')
})

t.test('getOrLoad: concurrent misses share one load; a miss after an invalidation loads again', async (t) => {
  const c = new Cache<string, string>({ ttlMs: 60_000, maxEntries: 10 })
  let loads = 0
  const first = deferred<string>()
  const load = () => { loads++; return first.promise }
  const a = c.getOrLoad('k', load)
  const b = c.getOrLoad('k', load)
  t.equal(loads, 1, 'one load for both')
  first.resolve('v1')
  t.same(await Promise.all([a, b]), ['v1', 'v1'])
  t.equal(c.get('k'), 'v1', 'stored')
  t.equal(await c.getOrLoad('k', async () => { loads++; return 'other' }), 'v1', 'a hit does not load')
  t.equal(loads, 1)

  const slow = deferred<string>()
  const before = c.getOrLoad('m', () => slow.promise)
  c.invalidate(['any'])
  let after = false
  const fresh = c.getOrLoad('m', async () => { after = true; return 'fresh' })
  t.ok(after, 'a caller after the invalidation does not join the load that began before it')
  t.equal(await fresh, 'fresh')
  slow.resolve('stale')
  t.equal(await before, 'stale', 'the earlier caller gets its own read')
  t.equal(c.get('m'), 'fresh', 'which is not stored over the fresh one')

  t.equal(await c.getOrLoad('none', async () => undefined), undefined)
  t.equal(c.size, 2, 'nothing stored for undefined')
  await t.rejects(c.getOrLoad('err', async () => { throw new Error('down') }), /down/)
  t.equal(await c.getOrLoad('err', async () => 'up'), 'up', 'a failed load is not shared with later callers')
})
