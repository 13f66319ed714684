import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { openDatabase, type DatabaseHandle } from '../../src/infrastructure/database/connection.js'
import { migrateInfrastructure, migrateReadModels } from '../../src/infrastructure/database/migrate.js'

interface Teardown { teardown(fn: () => unknown): void }

/** `TEST_DB=postgres` (with TEST_DATABASE_URL) runs against a real server; anything else, PGlite in memory. */
export const testDbKind = (): 'postgres' | 'pglite' =>
  process.env.TEST_DB === 'postgres' && process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite'

export const adminUrl = (): string | undefined => process.env.TEST_DATABASE_URL

/** Creates an empty PostgreSQL database for one test file and returns its URL (dropped at teardown). */
export async function createScratchDatabase(t: Teardown): Promise<string> {
  const admin = adminUrl()
  if (!admin) throw new Error('TEST_DATABASE_URL is not set')
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

/**
 * A fresh, migrated database for one test file: a new database on the PostgreSQL server under
 * TEST_DB=postgres, otherwise a PGlite in memory (or in `pgliteDir`, to read its files). Closed
 * (and dropped) at teardown.
 */
export async function openTestDatabase(t: Teardown, opts: { migrate?: boolean; readModels?: boolean; pgliteDir?: string } = {}): Promise<DatabaseHandle & { url?: string }> {
  const url = testDbKind() === 'postgres' ? await createScratchDatabase(t) : undefined
  const handle = await openDatabase(url ? { url, poolSize: 10 } : { ...(opts.pgliteDir ? { pgliteDir: opts.pgliteDir } : {}) })
  t.teardown(() => handle.close())
  if (opts.migrate !== false) await migrateInfrastructure(handle.db)
  if (opts.readModels) await migrateReadModels(handle.db)
  return Object.assign(handle, url ? { url } : {})
}

/**
 * A second, independent connection to the same test database (a second process, as tests see it).
 * PGlite has one connection: the same handle.
 */
export async function secondConnection(t: Teardown, db: DatabaseHandle & { url?: string }): Promise<DatabaseHandle> {
  if (!db.url) return db
  const other = await openDatabase({ url: db.url, poolSize: 5 })
  t.teardown(() => other.close())
  return other
}
