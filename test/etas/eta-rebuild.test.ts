import t from 'tap'
import { type Kysely, sql } from 'kysely'
import { build } from '../helpers/build.js'
import { readModelChecksums } from '../helpers/read-model-checksums.js'
import { rebuildReadModels } from '../../src/cli/rebuild.js'
import { etaWorld, north, until } from './fixtures.js'

// "A rebuild reproduces every read model, including the ETA tables": the engine's journal makes
// the replay meet events and positions in the order the live engine met them.

const TABLES = ['eta_routes', 'task_etas', 'task_eta_history', 'route_eta_feed']

t.test('a rebuild gives the same ETA rows while the live engine runs on; the engine goes on from them', async (t) => {
  const h = await build(t)
  const w = await etaWorld(h)
  t.teardown(() => w.bg?.stop())
  const now = Date.now()
  const [a, b, c] = [await w.taskAt(2), await w.taskAt(4), await w.taskAt(12, { time_windows: [{ from: new Date(now - 3600_000).toISOString(), to: new Date(now + 60_000).toISOString() }] })]
  const id = await w.route([a, b, c])
  await w.report([north(0)])
  await w.transition(a, 'start', undefined, w.driver.token)
  await w.started(id)
  // Positions between transitions, so that the order of the two inputs matters.
  for (const km of [0.5, 1, 1.5]) await w.report([north(km)])
  await w.transition(a, 'arrive', undefined, w.driver.token)
  await w.report([north(2)])
  await w.transition(a, 'complete', { signed_by: 'Ana' }, w.driver.token)
  await w.report([north(-4)])
  await w.api('PUT', `/routes/${id}/tasks`, { task_ulids: [a, c, b] })
  await w.report([north(-2)])
  await until(async () => (await w.api('GET', `/tasks/${c}/events`)).json().events.some((e: any) => e.type === 'TaskDelayed'), 15_000, 'a delay')
  const settled = async () => {
    const head = await h.platform.store.headPosition()
    await until(async () => {
      const cp = await sql<{ log_checkpoint: string }>`select log_checkpoint from read_model.eta_checkpoint`.execute(h.platform.db)
      return cp.rows[0]?.log_checkpoint === head
    }, 10_000, 'the engine at the head')
    await new Promise((r) => setTimeout(r, 300))
  }
  await settled()

  const db = h.platform.db as Kysely<any>
  const before = await readModelChecksums(db, TABLES)
  const history = await sql<{ n: number }>`select count(*)::int as n from read_model.task_eta_history`.execute(db)
  t.ok(history.rows[0]!.n >= 9, `${history.rows[0]!.n} ETAs stated`)
  await rebuildReadModels({ database: h.platform.database, store: h.platform.store, batchSize: 3 })
  t.same(await readModelChecksums(db, TABLES), before, 'the same rows')
  const cp = await sql<{ owner: string | null }>`select owner from read_model.eta_checkpoint`.execute(db)
  // The rebuild leaves the checkpoint without an owner, so the live engine reloads from the rebuilt
  // tables; under load its next lease renewal may already have come (and taken it again) by now.
  t.ok(cp.rows[0]!.owner === null || cp.rows[0]!.owner === w.bg!.etas.owner, `the lease handed back or retaken by the live engine (owner ${cp.rows[0]!.owner})`)

  // The live engine goes on from the rebuilt tables.
  const seq = Number((await sql<{ s: number }>`select eta_seq as s from read_model.eta_routes where route_id = ${id}`.execute(db)).rows[0]!.s)
  await w.report([north(-6)])
  await until(async () => Number((await sql<{ s: number }>`select eta_seq as s from read_model.eta_routes where route_id = ${id}`.execute(db)).rows[0]!.s) > seq, 10_000, 'new frames after the rebuild')
  const frames = await sql<{ seq: number }>`select seq from read_model.route_eta_feed where route_id = ${id} order by seq`.execute(db)
  t.same(frames.rows.map((r) => Number(r.seq)), frames.rows.map((_, i) => i + 1), 'frame numbers go on without a gap or a repeat')
})
