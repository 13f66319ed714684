import { fileURLToPath } from 'node:url'
import { type Kysely, Migrator, sql } from 'kysely'
import t from 'tap'
import { build } from '../helpers/build.js'
import { FolderMigrations } from '../../src/infrastructure/database/migrate.js'

// The migration that adds `feed_watermark` fills it for the rows a read model already holds: the
// latest updated_at along change_seq, whatever order the clock gave them (issue 15).
const folder = fileURLToPath(new URL('../../projections/migrations', import.meta.url))
const BEFORE = '2026-11-22T00-32-carrier-feed'

t.test('feed_watermark migration backfills existing rows and goes down again', async (t) => {
  const h = await build(t)
  const schema = `wm_migration_${process.pid}`
  const db = h.platform.db as Kysely<any>
  t.teardown(async () => { await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db) })
  await sql`create schema ${sql.id(schema)}`.execute(db)
  const migrator = new Migrator({
    db: db.withSchema(schema),
    // The platform's own provider: the files in its language (a compiled tree holds .ts and .js).
    provider: new FolderMigrations(folder),
    migrationTableSchema: schema,
    allowUnorderedMigrations: true,
  })
  const to = await migrator.migrateTo(BEFORE)
  t.error(to.error)

  // change_seq → updated_at (seconds): the clock goes back at 2 and 4.
  const rows: [number, number][] = [[1, 10], [2, 30], [3, 20], [4, 5], [5, 40]]
  for (const [seq, s] of rows) {
    const at = new Date(Date.UTC(2026, 0, 1, 0, 0, s))
    await sql`insert into ${sql.id(schema, 'shipments')} (id, ulid, control_number, integration, shipper_id, shipper_internal_id, shipper_name, shipper_subdomain,
        carrier_id, carrier_internal_id, carrier_name, carrier_subdomain, carrier_hub_id, status, carrier_phase,
        origin_address_id, destination_address_id, total_packages, total_grams, total_cm3, declared_value, is_public, requires_pickup,
        created_at, updated_at, stream_version, change_seq)
      values (${seq * 10}, ${`U${seq}`}, ${`C${seq}`}, 'custom', 'org_s', 1, 'S', 's', 'org_c', 2, 'C', 'c', 'car_x', 'pending', 'processing',
        'adr_o', 'adr_d', 1, 1, 1, 0, false, false, ${at}, ${at}, 1, ${seq})`.execute(db)
  }

  const latest = await migrator.migrateToLatest()
  t.error(latest.error)
  const got = await sql<{ change_seq: string; feed_watermark: Date }>`select change_seq, feed_watermark from ${sql.id(schema, 'shipments')} order by change_seq`.execute(db)
  t.same(got.rows.map((r) => [Number(r.change_seq), new Date(r.feed_watermark).getUTCSeconds()]), [[1, 10], [2, 30], [3, 30], [4, 30], [5, 40]])
  const indexes = async () => (await sql<{ indexname: string }>`select indexname from pg_indexes where schemaname = ${schema} and tablename = 'shipments'`.execute(db)).rows.map((r) => r.indexname)
  t.ok((await indexes()).includes('shipments_carrier_hub_feed_idx'))
  t.notOk((await indexes()).includes('shipments_carrier_hub_updated_idx'), 'the updated_at index it replaces is gone')

  const down = await migrator.migrateTo(BEFORE)
  t.error(down.error)
  t.ok((await indexes()).includes('shipments_carrier_hub_updated_idx'))
  const columns = await sql<{ column_name: string }>`select column_name from information_schema.columns where table_schema = ${schema} and table_name = 'shipments'`.execute(db)
  t.notOk(columns.rows.some((r) => r.column_name === 'feed_watermark'))
})
