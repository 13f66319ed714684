import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { openDatabase } from '../../src/infrastructure/database/connection.js'
import { migrateInfrastructure, migrateReadModels } from '../../src/infrastructure/database/migrate.js'
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store.js'
import { createScratchDatabase } from '../helpers/test-database.js'
import { counted, countedState, createCountingTables } from './fixtures/counting-projection.js'

const script = fileURLToPath(new URL('./fixtures/blocking-projector.ts', import.meta.url))
const root = fileURLToPath(new URL('../..', import.meta.url))

/** Runs the projector in a child process; resolves with it once it printed `until` (or exited). */
function projector(env: Record<string, string>, until: string): Promise<{ child: ReturnType<typeof spawn>; exit: Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))))
  let out = ''
  let err = ''
  child.stderr!.on('data', (d) => { err += String(d) })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`projector never printed ${until}: ${out} ${err}`)) }, 60_000)
    child.stdout!.on('data', (d) => {
      out += String(d)
      if (out.includes(until)) { clearTimeout(timer); resolve({ child, exit }) }
    })
    void exit.then((code) => { if (!out.includes(until)) { clearTimeout(timer); reject(new Error(`projector exited ${code} before ${until}: ${err}`)) } })
  })
}

t.test('a projector killed mid-batch loses nothing and applies nothing twice', async (t) => {
  const url = await createScratchDatabase(t)
  const env: Record<string, string> = { DB_URL: url }

  const db = await openDatabase({ url, poolSize: 2 })
  await migrateInfrastructure(db.db)
  await migrateReadModels(db.db)
  await createCountingTables(db.db)
  const store = new PostgresEventStore(db.db)
  for (let i = 1; i <= 50; i += 5) await store.append('counted-killed', [0, 1, 2, 3, 4].map((k) => counted(i + k)), 'any')

  // Batches of 10: events 1–20 commit, then the process blocks on event 25 with 21–24 written but uncommitted.
  const { child, exit } = await projector({ ...env, BLOCK_AT: '25', BATCH_SIZE: '10' }, 'BLOCKED')
  child.kill('SIGKILL')
  t.equal(await exit, -1, 'the projector died by SIGKILL')

  const afterKill = await countedState(db.db, 'killed')
  const kept = afterKill.ns.length
  const stored = await db.db.withSchema('read_model').selectFrom('projection_checkpoints' as any).select('checkpoint').where('name', '=', 'killed').executeTakeFirst() as { checkpoint: string } | undefined
  const reader = new PostgresEventStore(db.db)
  const upToCheckpoint = stored
    ? (await reader.readAll(null, 1000)).events.filter((e) => e.streamId === 'counted-killed' && reader.comparePositions(e.position, stored.checkpoint) <= 0).length
    : 0
  t.equal(kept, upToCheckpoint, `the rows are exactly the events up to the stored checkpoint (${kept}): the interrupted batch left nothing`)
  t.ok(kept < 25, 'the event the projector blocked on is not applied')
  t.same(afterKill.ns, Array.from({ length: kept }, (_, i) => i + 1))
  t.equal(afterKill.applied, kept, 'rows and the application counter agree')

  const restarted = await projector({ ...env, BATCH_SIZE: '10' }, 'CAUGHT_UP')
  t.equal(await restarted.exit, 0, 'the restarted projector catches up')

  const state = await countedState(db.db, 'killed')
  t.same(state.ns, Array.from({ length: 50 }, (_, i) => i + 1), 'no event lost')
  t.equal(state.doubled, 0, 'no row applied twice')
  t.equal(state.applied, 50, 'the application counter equals the number of events')
  await db.close()
})
