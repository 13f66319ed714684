import t from 'tap'
import { sql } from 'kysely'
import { openTestDatabase } from '../../helpers/test-database.js'

const until = async (check: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 20))
  return check()
}

t.test('LISTEN survives a dropped connection: channels are listened again and handlers told to look again', async (t) => {
  const db = await openTestDatabase(t)
  const got: Record<string, string[]> = { a: [], b: [] }
  await db.listen('listen_test_a', (p) => got.a!.push(p))
  await db.listen('listen_test_b', (p) => got.b!.push(p))
  await sql`select pg_notify('listen_test_a', 'one')`.execute(db.db)
  t.ok(await until(() => got.a!.includes('one')), 'a notification arrives')

  const killed = await sql<{ n: number }>`
    select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
    where application_name = 'shipping-listen' and datname = current_database()`.execute(db.db)
  t.equal(killed.rows[0]!.n, 1, 'the listening connection is dropped')
  t.ok(await until(() => got.a!.includes('') && got.b!.includes('')), 'after reconnecting, every handler hears "anything may have changed"')
  await sql`select pg_notify('listen_test_b', 'two')`.execute(db.db)
  t.ok(await until(() => got.b!.includes('two')), 'notifications arrive again, on every channel')
  await sql`select pg_notify('listen_test_a', 'three')`.execute(db.db)
  t.ok(await until(() => got.a!.includes('three')))
})
