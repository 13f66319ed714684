import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { openDatabase, type DatabaseHandle } from '../../src/infrastructure/database/connection.js'
import { migrateInfrastructure, migrateReadModels, migrationFiles } from '../../src/infrastructure/database/migrate.js'

interface Teardown { teardown(fn: () => unknown): void }

/** The PostgreSQL server the tests run against: `npm test` (infra/local/test.sh) starts it and sets TEST_DATABASE_URL. */
export const adminUrl = (): string => {
  const url = process.env.TEST_DATABASE_URL
  if (!url) throw new Error('TEST_DATABASE_URL is not set: run the tests through `npm test` (e.g. `npm test -- test/path/file.test.ts`), which starts a PostgreSQL server for them')
  return url
}

const withUrlPath = (base: string, name: string): string => {
  const url = new URL(base)
  url.pathname = `/${name}`
  return url.toString()
}

/**
 * The name of a database that has every migration applied, made once per server and migration set
 * (the files' contents name it), which fresh databases copy (`create database … template`) instead
 * of running the whole chain each. Test processes that race to make it wait on an advisory lock;
 * a template is built under another name and renamed once complete, so a copy never sees half of it.
 */
let templateName: Promise<string> | undefined
function migratedTemplate(admin: string): Promise<string> {
  templateName ??= (async () => {
    const hash = createHash('sha256')
    for (const file of migrationFiles()) hash.update(file).update(readFileSync(file))
    const name = `t_template_${hash.digest('hex').slice(0, 16)}`
    const client = new pg.Client({ connectionString: admin })
    await client.connect()
    try {
      await client.query(`select pg_advisory_lock(hashtextextended('test-template', 0))`)
      const found = await client.query('select 1 from pg_database where datname = $1', [name])
      if (!found.rowCount) {
        const building = `${name}_building`
        await client.query(`drop database if exists ${building} with (force)`)
        await client.query(`create database ${building}`)
        const handle = await openDatabase({ url: withUrlPath(admin, building), poolSize: 2 })
        try {
          await migrateInfrastructure(handle.db)
          await migrateReadModels(handle.db)
        } finally {
          await handle.close()
        }
        await client.query(`alter database ${building} rename to ${name}`)
      }
    } finally {
      await client.end()
    }
    return name
  })()
  return templateName
}

/**
 * Creates a PostgreSQL database for one test file and returns its URL (dropped at teardown): empty,
 * or (`migrated`) a copy of the database every migration made.
 */
export async function createScratchDatabase(t: Teardown, opts: { migrated?: boolean } = {}): Promise<string> {
  const admin = adminUrl()
  const name = `t_${randomBytes(6).toString('hex')}`
  const template = opts.migrated ? ` template ${await migratedTemplate(admin)}` : ''
  const client = new pg.Client({ connectionString: admin })
  await client.connect()
  await client.query(`create database ${name}${template}`)
  await client.end()
  const url = new URL(admin)
  url.pathname = `/${name}`
  t.teardown(async () => {
    const c = new pg.Client({ connectionString: admin })
    await c.connect()
    await c.query(`drop database if exists ${name} with (force)`).catch(() => undefined)
    await c.end()
  })
  return url.toString()
}

/** A fresh, migrated database of its own on the test server for one test file; closed and dropped at teardown. */
export async function openTestDatabase(t: Teardown, opts: { migrate?: boolean; readModels?: boolean; migrated?: boolean } = {}): Promise<DatabaseHandle & { url: string }> {
  // Every migration applied (a copy of the template) where the caller asks for all of them.
  const migrated = opts.migrated ?? (opts.migrate !== false && opts.readModels === true)
  const url = await createScratchDatabase(t, { migrated })
  const handle = await openDatabase({ url, poolSize: 10 })
  t.teardown(() => handle.close())
  if (!migrated && opts.migrate !== false) await migrateInfrastructure(handle.db)
  if (!migrated && opts.readModels) await migrateReadModels(handle.db)
  return Object.assign(handle, { url })
}

/** A second, independent connection to the same test database (a second process, as tests see it). */
export async function secondConnection(t: Teardown, db: DatabaseHandle & { url?: string }): Promise<DatabaseHandle> {
  if (!db.url) throw new Error('secondConnection: a database from openTestDatabase (or build) is needed, which knows its URL')
  const other = await openDatabase({ url: db.url, poolSize: 5 })
  t.teardown(() => other.close())
  return other
}
