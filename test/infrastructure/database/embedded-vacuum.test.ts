import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql, type Kysely } from 'kysely'
import { loadConfig } from '../../../src/config.js'
import { createPlatform } from '../../../src/platform.js'
import { vacuumBusyTables } from '../../../src/infrastructure/database/embedded-vacuum.js'
import { openTestDatabase, testDbKind } from '../../helpers/test-database.js'

interface TableStats { n_dead_tup: number; vacuum_count: number }

const stats = async (db: Kysely<any>, schema: string, table: string): Promise<TableStats> => {
  const { rows } = await sql<TableStats>`
    select n_dead_tup::int as n_dead_tup, (vacuum_count + autovacuum_count)::int as vacuum_count
      from pg_stat_user_tables where schemaname = ${schema} and relname = ${table}`.execute(db)
  return rows[0] ?? { n_dead_tup: 0, vacuum_count: 0 }
}

/** Table statistics reach pg_stat_* up to a second after the transaction that made them. */
async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await read()
    if (ok(v) || Date.now() > end) return v
    await new Promise((r) => setTimeout(r, 100))
  }
}

t.test('a pass vacuums the tables with many dead rows and leaves quiet ones alone', async (t) => {
  const { db } = await openTestDatabase(t, { migrate: false })
  await sql`create schema vac_test`.execute(db)
  await sql`create table vac_test.churned (id int primary key, v int)`.execute(db)
  await sql`create table vac_test.quiet (id int primary key)`.execute(db)
  // One connection, whose statistics are flushed at once (a backend otherwise reports them up to 10 s later).
  await db.connection().execute(async (conn) => {
    await sql`insert into vac_test.churned select g, 0 from generate_series(1, 2000) g`.execute(conn)
    await sql`insert into vac_test.quiet select g from generate_series(1, 10) g`.execute(conn)
    for (let i = 0; i < 3; i++) await sql`update vac_test.churned set v = v + 1`.execute(conn)
    await sql`select pg_stat_force_next_flush()`.execute(conn)
    await sql`select 1`.execute(conn)
  })
  const before = await until(() => stats(db, 'vac_test', 'churned'), (s) => s.n_dead_tup >= 5000, 20_000)
  t.ok(before.n_dead_tup >= 5000, `dead rows are counted (${before.n_dead_tup})`)
  const quietBefore = await stats(db, 'vac_test', 'quiet')

  const done = await vacuumBusyTables(db)
  t.ok(done.vacuumed.includes('vac_test.churned'), 'the churned table is vacuumed')
  t.notOk(done.vacuumed.includes('vac_test.quiet') || done.analyzed.includes('vac_test.quiet'), 'the quiet table is not touched')
  const after = await until(() => stats(db, 'vac_test', 'churned'), (s) => s.vacuum_count > before.vacuum_count)
  t.ok(after.vacuum_count > before.vacuum_count, 'the vacuum is recorded')
  t.ok(after.n_dead_tup < 100, `dead rows are reclaimed (${after.n_dead_tup} left)`)
  t.equal((await stats(db, 'vac_test', 'quiet')).vacuum_count, quietBefore.vacuum_count)
})

// The embedded server is PGlite whatever TEST_DB says: its test runs once, in the PGlite run.
if (testDbKind() === 'pglite') t.test('the embedded server vacuums its busy tables on a timer, by itself', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'vacuum-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: 'vacuum-test-admin-token', EMBEDDED_VACUUM_INTERVAL_MS: '300' })
  const platform = await createPlatform(config)
  t.teardown(() => platform.close())
  t.equal(platform.database.kind, 'pglite')
  const db = platform.db
  // What a busy day leaves behind: idempotency records written and expired.
  await sql`insert into idempotency_keys (scope, key, request_hash, status_code, response_body, created_at)
            select 'org:1', 'k' || g, 'h', 201, '{}', now() from generate_series(1, 3000) g`.execute(db)
  await sql`delete from idempotency_keys`.execute(db)
  const vacuumed = await until(() => stats(db, 'public', 'idempotency_keys'), (s) => s.vacuum_count > 0 && s.n_dead_tup === 0)
  t.ok(vacuumed.vacuum_count > 0, 'idempotency_keys was vacuumed without anyone asking')
  t.equal(vacuumed.n_dead_tup, 0, 'and its dead rows are gone')
})

t.test('EMBEDDED_VACUUM_INTERVAL_MS defaults to five minutes and 0 turns it off', async (t) => {
  t.equal(loadConfig({}).embeddedVacuumIntervalMs, 300_000)
  t.equal(loadConfig({ EMBEDDED_VACUUM_INTERVAL_MS: '0' }).embeddedVacuumIntervalMs, 0)
})
