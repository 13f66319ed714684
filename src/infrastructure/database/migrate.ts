import { readdirSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely'
import { messageOf } from '../../shared/thrown.js'

/**
 * A migration file in this module's own language: `.ts` run through tsx, `.js` once compiled (a
 * compiled tree may hold the sources beside the output: the test suite's, infra/local/mirror-build.mjs).
 */
const MIGRATION_FILE = import.meta.url.endsWith('.ts') ? /^\d{4}-\d\d-\d\dT.*\.ts$/ : /^\d{4}-\d\d-\d\dT.*\.js$/
const isMigrationFile = (f: string): boolean => MIGRATION_FILE.test(f) && !f.endsWith('.d.ts')
const migrationName = (f: string): string => f.replace(/\.(ts|js)$/, '')

/** Loads every dated migration file of a folder; the file name (sorted) is the migration's name. */
export class FolderMigrations implements MigrationProvider {
  constructor(private readonly folder: string) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await readdir(this.folder)).filter(isMigrationFile).sort()
    const out: Record<string, Migration> = {}
    for (const f of files) {
      out[migrationName(f)] = (await import(pathToFileURL(`${this.folder}/${f}`).href)) as Migration
    }
    return out
  }
}

const infrastructureFolder = fileURLToPath(new URL('./migrations', import.meta.url))
const readModelFolder = fileURLToPath(new URL('../../../projections/migrations', import.meta.url))

/** Every migration file of both folders, in the language this module runs in (paths, sorted by folder then name). */
export function migrationFiles(): string[] {
  return [infrastructureFolder, readModelFolder].flatMap((folder) =>
    readdirSync(folder).filter(isMigrationFile).sort().map((f) => `${folder}/${f}`))
}

/** Every migration's name, both folders (what a migrated database has applied). */
export function migrationNames(): string[] {
  return [infrastructureFolder, readModelFolder].flatMap((folder) =>
    readdirSync(folder).filter(isMigrationFile).map(migrationName)).sort()
}

// Modules number their migrations in ranges (event store 00-0x, bus 00-1x, shipments 00-2x…) and
// land them in any order, so a database may meet a lower-numbered one after a higher: allowed.
async function run(migrator: Migrator, what: string): Promise<void> {
  const { error, results } = await migrator.migrateToLatest()
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName
    throw new Error(`${what} migration ${failed ?? ''} failed: ${messageOf(error)}`, { cause: error })
  }
}

/** Event store, idempotency, bus and other platform tables, in the `public` schema. */
export async function migrateInfrastructure(db: Kysely<any>): Promise<void> {
  await run(new Migrator({ db, provider: new FolderMigrations(infrastructureFolder), allowUnorderedMigrations: true }), 'infrastructure')
}

export const READ_MODEL_SCHEMA = 'read_model'

/**
 * Read models live in their own schema so `rebuild` can build a fresh copy beside them and swap
 * it in with two renames. Read-model migrations therefore use the schema builder only (no raw
 * table names), and Kysely's withSchema places them.
 */
export async function migrateReadModels(db: Kysely<any>, schema = READ_MODEL_SCHEMA): Promise<void> {
  await sql`create schema if not exists ${sql.id(schema)}`.execute(db)
  await run(new Migrator({
    db: db.withSchema(schema),
    provider: new FolderMigrations(readModelFolder),
    migrationTableSchema: schema,
    allowUnorderedMigrations: true,
  }), 'read-model')
}
