import { sql } from 'kysely'
import t from 'tap'
import { InProcessBus } from '../../../src/infrastructure/bus/in-process-bus.js'
import { openTestDatabase, secondConnection } from '../../helpers/test-database.js'
import { busContract, waitFor } from './bus-contract.js'

const db = await openTestDatabase(t)

busContract(t, {
  adapter: 'in-process',
  db,
  otherDb: () => secondConnection(t, db),
  async newBus(handle) {
    const bus = new InProcessBus(handle, { pollMs: 100 })
    await bus.start()
    return bus
  },
})

t.test('a burst of deliveries refreshes the planner statistics of the delivery tables', async (t) => {
  const lastAnalyze = async () => (await sql<{ at: Date | null }>`
    select coalesce(last_analyze, last_autoanalyze) as at from pg_stat_user_tables where relname = 'bus_deliveries'`.execute(db.db)).rows[0]?.at?.getTime() ?? 0
  const before = await lastAnalyze()
  const bus = new InProcessBus(db, { pollMs: 100 })
  await bus.start()
  t.teardown(() => bus.close({ graceMs: 0 }))
  await bus.subscribe({ name: 'burst_idle', subjects: ['events.burst.>'] }, () => new Promise(() => {}))
  await bus.publish(Array.from({ length: 1200 }, (_, i) => ({ subject: 'events.burst.E', id: `burst-${i}`, data: {} })))
  // Without fresh statistics the claim sorts the whole backlog on every call (autovacuum comes late).
  await waitFor('ANALYZE after the burst', async () => (await lastAnalyze()) > before, 10_000)
  t.pass('analyzed')
})
