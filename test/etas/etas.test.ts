import t from 'tap'
import { build } from '../helpers/build.js'
import { etaWorld, north } from './fixtures.js'

t.test('ETAs of a started route: from the driver\'s position, moved by positions and transitions', async (t) => {
  const h = await build(t)
  const w = await etaWorld(h)
  t.teardown(() => w.bg?.stop())
  const [a, b, c] = [await w.taskAt(2), await w.taskAt(4), await w.taskAt(6)]
  const id = await w.route([a, b, c])
  t.equal((await w.report([north(0)])).statusCode, 202)
  t.equal((await w.transition(a, 'start', undefined, w.driver.token)).statusCode, 200)
  await w.started(id)
  const r = await w.routeWhen(id, (r) => r.tasks.every((x: any) => x.eta !== null), 'every open task has an ETA')
  t.match(r.tasks[0].eta, { basis: 'position' })
  t.ok(r.driver_position, 'the route shows where the driver is')
  const firstAt = Date.parse(r.tasks[0].eta.at)
  t.ok(firstAt > Date.now() + 3 * 60_000 && firstAt < Date.now() + 5 * 60_000, `2 km at 30 km/h: about 4 minutes (${r.tasks[0].eta.at})`)
})
