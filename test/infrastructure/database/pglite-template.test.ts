// A first start on a new DATA_DIR copies the install's migrated template instead of running initdb
// and every migration; an existing database is never touched.
import t from 'tap'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { openDatabase } from '../../../src/infrastructure/database/connection.js'
import { migrateInfrastructure, migrateReadModels, migrationNames } from '../../../src/infrastructure/database/migrate.js'
import { seedFromTemplate, templateDir } from '../../../src/infrastructure/database/pglite-template.js'
import { buildMigratedTemplate } from '../../../src/infrastructure/database/migrated-template.js'

t.test('a new data directory starts from the template, already migrated; an existing one is left alone', async (t) => {
  await buildMigratedTemplate() // `npm ci` made it already; built here if that step was skipped
  t.ok(existsSync(templateDir()), 'the template exists')
  const root = mkdtempSync(join(tmpdir(), 'pglite-template-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  const dir = join(root, 'pglite')

  const database = await openDatabase({ pgliteDir: dir })
  t.teardown(() => database.close())
  t.ok(existsSync(join(dir, 'PG_VERSION')), 'a database directory')
  const applied = await sql<{ name: string }>`
    select name from kysely_migration union all select name from read_model.kysely_migration order by name`.execute(database.db)
  t.same(applied.rows.map((r) => r.name), migrationNames(), 'every migration already applied')
  await migrateInfrastructure(database.db)
  await migrateReadModels(database.db)
  await sql`create table template_probe (x int)`.execute(database.db)
  await database.close()

  t.notOk(seedFromTemplate(dir), 'an existing database is not seeded again')
  const again = await openDatabase({ pgliteDir: dir })
  t.teardown(() => again.close())
  const probe = await sql<{ n: number }>`select count(*)::int as n from information_schema.tables where table_name = 'template_probe'`.execute(again.db)
  t.equal(probe.rows[0]!.n, 1, 'and keeps what it had')
})
