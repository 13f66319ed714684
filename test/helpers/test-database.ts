import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { openDatabase, type DatabaseHandle } from '../../src/infrastructure/database/connection.js'
import { migrateInfrastructure, migrateReadModels } from '../../src/infrastructure/database/migrate.js'

interface Teardown { teardown(fn: () => unknown): void }

/** The PostgreSQL server the tests run against: `npm test` (infra/local/test.sh) starts it and sets TEST_DATABASE_URL. */
export const adminUrl = (): string => {
  const url = process.env.TEST_DATABASE_URL
  if (!url) throw new Error('TEST_DATABASE_URL is not set: run the tests through `npm test` (e.g. `npm test -- test/path/file.test.ts`), which starts a PostgreSQL server for them')
  return url
}

/** Creates an empty PostgreSQL database for one test file and returns its URL (dropped at teardown). */
export async function createScratchDatabase(t: Teardown): Promise<string> {
  const admin = adminUrl()
  const name = `t_${randomBytes(6).toString('hex')}`
  const client = new pg.Client({ connectionString: admin })
  await client.connect()
  await client.query(`create database ${name}`)
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
export async function openTestDatabase(t: Teardown, opts: { migrate?: boolean; readModels?: boolean } = {}): Promise<DatabaseHandle & { url: string }> {
  const url = await createScratchDatabase(t)
  const handle = await openDatabase({ url, poolSize: 10 })
  t.teardown(() => handle.close())
  if (opts.migrate !== false) await migrateInfrastructure(handle.db)
  if (opts.readModels) await migrateReadModels(handle.db)
  return Object.assign(handle, { url })
}

/** A second, independent connection to the same test database (a second process, as tests see it). */
export async function secondConnection(t: Teardown, db: DatabaseHandle & { url?: string }): Promise<DatabaseHandle> {
  if (!db.url) throw new Error('secondConnection: a database from openTestDatabase (or build) is needed, which knows its URL')
  const other = await openDatabase({ url: db.url, poolSize: 5 })
  t.teardown(() => other.close())
  return other
}
