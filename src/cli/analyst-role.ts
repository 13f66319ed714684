import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { sql } from 'kysely'
import pg from 'pg'
import { loadConfig } from '../config.js'
import { openDatabase } from '../infrastructure/database/connection.js'
import { READ_MODEL_SCHEMA } from '../infrastructure/database/migrate.js'
import { grantReadModelReader } from '../infrastructure/database/read-model-grants.js'

/** An analyst-role request that cannot run as asked (printed as is, exit code 2). */
export class AnalystRoleRefused extends Error {}

export const ANALYST_ROLE_USAGE = `analyst-role --name <role> [--password-file <file>]
            create (or bring up to date) a PostgreSQL login role that reads the read models
            (schema ${READ_MODEL_SCHEMA}) but no token hash or sealed secret, and nothing else;
            without --password-file a password is generated and shown once. A rebuild keeps its
            grants. A PostgreSQL server of your own only (DATABASE_URL): the embedded one admits
            its owner alone, on a private socket`

// Lower case only: the name is used unquoted in psql and connection strings without surprises.
const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/**
 * `npm run analyst-role -- --name analyst [--password-file f]`: as the database's owner (with
 * CREATEROLE to create the role; an existing role is only given its grants), in one transaction.
 */
export async function analystRole(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { name: { type: 'string' }, 'password-file': { type: 'string' } } })
  const name = values.name
  if (!name) throw new AnalystRoleRefused(`--name is required\nusage: ${ANALYST_ROLE_USAGE}`)
  if (!ROLE_NAME.test(name) || name.startsWith('pg_') || name === 'public') {
    throw new AnalystRoleRefused(`--name ${JSON.stringify(name)}: a role name is lower-case letters, digits and _, not starting with a digit or pg_`)
  }
  const config = loadConfig()
  if (!config.databaseUrl) {
    throw new AnalystRoleRefused('analyst roles are not available on the embedded PostgreSQL (no DATABASE_URL): it listens on a '
      + 'private socket of its owner\'s (or loopback with its owner\'s password) and admits no one else, so a role there would reach '
      + 'nothing. Analysts read a PostgreSQL server\'s read models: run this with DATABASE_URL set to it.')
  }
  const given = values['password-file'] === undefined ? undefined : readFileSync(values['password-file'], 'utf8').replace(/\r?\n$/, '')
  if (given === '') throw new AnalystRoleRefused(`--password-file ${values['password-file']} is empty`)
  const database = await openDatabase({ url: config.databaseUrl, poolSize: 1 })
  try {
    const outcome = await database.db.transaction().execute(async (trx) => {
      const schema = await sql`select 1 from pg_namespace where nspname = ${READ_MODEL_SCHEMA}`.execute(trx)
      if (schema.rows.length === 0) throw new AnalystRoleRefused(`no schema ${READ_MODEL_SCHEMA} in this database yet: start the server on it once (or run npm run rebuild)`)
      const existing = (await sql<{ rolsuper: boolean; rolbypassrls: boolean }>`
        select rolsuper, rolbypassrls from pg_roles where rolname = ${name}`.execute(trx)).rows[0]
      if (existing && (existing.rolsuper || existing.rolbypassrls)) {
        throw new AnalystRoleRefused(`role ${name} is a superuser (or bypasses row security): it reads everything whatever it is granted; choose another name`)
      }
      const password = existing ? given : given ?? randomBytes(24).toString('base64url')
      // A role's password cannot be a bound parameter: it goes as a literal, quoted by node-postgres.
      const secret = password === undefined ? sql`` : sql` password ${sql.raw(pg.escapeLiteral(password))}`
      if (!existing) await sql`create role ${sql.id(name)} login nosuperuser nocreatedb nocreaterole noreplication${secret}`.execute(trx)
      else if (password !== undefined) await sql`alter role ${sql.id(name)}${secret}`.execute(trx)
      const db = (await sql<{ db: string }>`select current_database() as db`.execute(trx)).rows[0]!.db
      await sql`grant connect on database ${sql.id(db)} to ${sql.id(name)}`.execute(trx)
      // Its sessions start read-only and in the read models (it could not write anyway: nothing is granted but SELECT).
      await sql`alter role ${sql.id(name)} in database ${sql.id(db)} set search_path = ${sql.raw(READ_MODEL_SCHEMA)}`.execute(trx)
      await sql`alter role ${sql.id(name)} in database ${sql.id(db)} set default_transaction_read_only = on`.execute(trx)
      const grants = await grantReadModelReader(trx, name)
      return { created: !existing, shownPassword: existing || given !== undefined ? undefined : password, db, grants }
    })
    const { grants } = outcome
    process.stdout.write(`${outcome.created ? 'created' : 'updated'} role ${name}: it reads ${grants.columns} columns of ${grants.tables} tables `
      + `of ${READ_MODEL_SCHEMA} in database ${outcome.db}; withheld: ${grants.withheld.join(', ')}; `
      + 'a rebuild keeps these grants, run this again after an upgrade that adds read-model tables or columns\n')
    if (outcome.shownPassword) process.stdout.write(`password (shown once): ${outcome.shownPassword}\n`)
  } finally {
    await database.close()
  }
}
