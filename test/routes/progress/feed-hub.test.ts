import t from 'tap'
import type { KyselyPlugin } from 'kysely'
import { build } from '../../helpers/build.js'
import { FeedHub } from '../../../src/routes/progress/feed-hub.js'
import { readFeedRoute, type FeedFrame } from '../../../src/routes/progress/feed-queries.js'
import { progressWorld } from './fixtures.js'

/** Counts the statements a Kysely instance sends. */
const counting = () => {
  const counter = { queries: 0 }
  const plugin: KyselyPlugin = {
    transformQuery: (args) => { counter.queries++; return args.node },
    transformResult: async (args) => args.result,
  }
  return { counter, plugin }
}

t.test('the hub: one query per change notice for all of a route\'s watchers, each frame once to each', async (t) => {
  const h = await build(t)
  const w = await progressWorld(h)
  const [a, b] = await w.tasks(2)
  const id = await w.route({ tasks: [a!, b!], publish: true })
  const quiet = await w.route({ tasks: [], publish: true })
  const { counter, plugin } = counting()
  const hub = new FeedHub(h.platform.rm.withPlugin(plugin))
  const unsubscribe = await h.platform.changes.subscribe(hub.subscriber)
  t.teardown(unsubscribe)

  const received: FeedFrame[][] = []
  const unwatch: (() => void)[] = []
  for (let i = 0; i < 50; i++) {
    const got: FeedFrame[] = []
    received.push(got)
    unwatch.push(await hub.watch(i % 10 === 0 ? quiet : id, (frames) => got.push(...frames), async () => (await readFeedRoute(h.platform.rm, i % 10 === 0 ? quiet : id))!.last_seq))
  }
  t.same(hub.size, { routes: 2, watchers: 50 })
  const before = counter.queries
  t.equal((await w.transition(a!, 'start')).statusCode, 200)
  const deadline = Date.now() + 5000
  const busy = received.filter((_, i) => i % 10 !== 0)
  while (busy.some((g) => g.length === 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  t.ok(busy.every((g) => g.length === 1 && g[0]!.event === 'task.started'), 'each of the 45 watchers of the route got the frame once')
  t.ok(received.filter((_, i) => i % 10 === 0).every((g) => g.length === 0), 'the other route\'s watchers got nothing')
  const spent = counter.queries - before
  t.ok(spent >= 1 && spent <= 2, `${spent} queries for 45 watchers (one per notice heard)`)

  for (const u of unwatch) u()
  t.same(hub.size, { routes: 0, watchers: 0 }, 'unwatched: nothing kept')
  const after = counter.queries
  t.equal((await w.transition(b!, 'start')).statusCode, 200)
  await new Promise((r) => setTimeout(r, 300))
  t.equal(counter.queries, after, 'a route nobody watches costs nothing')
})
