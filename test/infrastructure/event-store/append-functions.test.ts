import { sql } from 'kysely'
import t, { type Test } from 'tap'
import { down, up } from '../../../src/infrastructure/database/migrations/2026-11-24T00-03-event-store-append-shared.js'
import { openTestDatabase } from '../../helpers/test-database.js'

// The append's version move and insert live in one function (migration 2026-11-24T00-03): a later
// migration that copies them into another function again fails here. The contract suite proves the
// behaviour; this proves the shape it runs on.
const inserting = async (db: Parameters<typeof up>[0]): Promise<string[]> =>
  (await sql<{ proname: string }>`
    select proname from pg_proc
    where proname like 'es_append%' and prosrc ilike '%insert into es_events%'
    order by proname`.execute(db)).rows.map((r) => r.proname)

/** The es_append* functions whose body calls `callee`. */
const callers = async (db: Parameters<typeof up>[0], callee: string): Promise<string[]> =>
  (await sql<{ proname: string }>`
    select proname from pg_proc
    where proname like 'es_append%' and prosrc ~* ${`from ${callee}\\(`}
    order by proname`.execute(db)).rows.map((r) => r.proname)

const folded = async (t: Test, db: Parameters<typeof up>[0]) => {
  t.same(await inserting(db), ['es_append_batch_v2', 'es_append_v2'], 'only es_append_v2 (and the set-based batch) insert events')
  t.same(await callers(db, 'es_append_v2'), ['es_append', 'es_append_batch'], 'es_append and es_append_batch call es_append_v2')
  t.same(await callers(db, 'es_append'), [], 'nothing goes through es_append (a nested call is paid per append)')
}

t.test('one append body: es_append_v2 holds it, es_append and es_append_batch call it', async (t) => {
  const database = await openTestDatabase(t)
  await folded(t, database.db)

  await down(database.db)
  t.same(await inserting(database.db), ['es_append', 'es_append_batch_v2', 'es_append_v2'], 'down restores the two bodies of 00-04 and 00-07')
  t.same(await callers(database.db, 'es_append'), ['es_append_batch', 'es_append_v2'], 'and their calls to es_append')
  await up(database.db)
  await folded(t, database.db)
})
