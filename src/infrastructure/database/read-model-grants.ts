import { type Kysely, type RawBuilder, sql } from 'kysely'
import { READ_MODEL_SCHEMA } from './migrate.js'

/**
 * The read-model columns no analyst may read: credentials, not facts. `access_tokens.token_hash` is
 * the SHA-256 of every organization, user and carrier API token (a hash of a random token, but a
 * lookup key of the authentication all the same); `carrier_secrets.secret_encrypted` and
 * `webhooks.secret_encrypted` are the HMAC secrets sealed under SECRETS_KEY. A test fails when a
 * column named like a secret appears without being listed here or in NOT_SECRET.
 */
export const SECRET_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  access_tokens: ['token_hash'],
  carrier_secrets: ['secret_encrypted'],
  webhooks: ['secret_encrypted'],
}

/**
 * Columns whose names sound like secrets but are not: a token's or secret's public id, natural keys,
 * and the blob store's key of an upload (a file name in BLOB_DIR, which an analyst cannot reach).
 */
export const NOT_SECRET: readonly string[] = [
  'access_tokens.token_id', 'carrier_secrets.secret_id', 'blueprints.key', 'workflows.blueprint_key', 'tasks.step_key',
  'vehicles.plate_key', 'shipment_attachments.blob_key', 'workflow_listing_counts.blueprint_key',
]

/** A name that sounds like a credential: the test holds every such read-model column to one of the two lists. */
export const SOUNDS_SECRET = /hash|secret|encrypt|sealed|password|token|key/

/** One advisory lock for everything that changes the read models' grants, so that a rebuild's copy never misses a grant made meanwhile. */
const GRANTS_LOCK = 'read-model-grants'
export const lockGrants = (db: Kysely<any>) => sql`select pg_advisory_xact_lock(hashtextextended(${GRANTS_LOCK}, 0))`.execute(db)

export interface ReaderGrants {
  tables: number
  columns: number
  /** `table.column` of every column withheld (SECRET_COLUMNS that exist). */
  withheld: string[]
}

/**
 * Lets `role` read every read-model table in `schema`, column by column, except SECRET_COLUMNS.
 * Column grants rather than table grants: a column a later migration adds stays unreadable until
 * this runs again, so a new secret is never readable by default. What the role held before on these
 * tables is revoked first (a rerun gives exactly this). Run inside a transaction.
 */
export async function grantReadModelReader(db: Kysely<any>, role: string, schema = READ_MODEL_SCHEMA): Promise<ReaderGrants> {
  await lockGrants(db)
  const columns = (await sql<{ table_name: string; column_name: string }>`
    select c.table_name, c.column_name from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = ${schema} and t.table_type = 'BASE TABLE'
    order by c.table_name, c.ordinal_position`.execute(db)).rows
  const byTable = new Map<string, string[]>()
  for (const c of columns) byTable.set(c.table_name, [...(byTable.get(c.table_name) ?? []), c.column_name])
  await sql`grant usage on schema ${sql.id(schema)} to ${sql.id(role)}`.execute(db)
  const out: ReaderGrants = { tables: 0, columns: 0, withheld: [] }
  for (const [table, names] of byTable) {
    const secret = SECRET_COLUMNS[table] ?? []
    const readable = names.filter((n) => !secret.includes(n))
    out.withheld.push(...names.filter((n) => secret.includes(n)).map((n) => `${table}.${n}`))
    // Revoking the table's privilege revokes its column privileges too (PostgreSQL's REVOKE).
    await sql`revoke all on table ${sql.id(schema, table)} from ${sql.id(role)}`.execute(db)
    if (readable.length === 0) continue
    await sql`grant select (${sql.join(readable.map((n) => sql.id(n)))}) on table ${sql.id(schema, table)} to ${sql.id(role)}`.execute(db)
    out.tables++
    out.columns += readable.length
  }
  return out
}

const PRIVILEGES = new Set(['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER', 'USAGE', 'CREATE'])

interface AclRow { table_name: string | null; column_name: string | null; grantee: string | null; privilege_type: string; is_grantable: boolean }

/**
 * Every grant on schema `from`, its tables and their columns (other than their owners' own),
 * given again on the same-named objects of schema `to`: the rebuild builds its tables afresh and
 * drops the old ones, and with them every grant an operator made (`npm run analyst-role`, or by
 * hand). A grant on a table or column `to` lacks is left out. Returns how many were given.
 */
export async function copyReadModelGrants(db: Kysely<any>, from: string, to: string): Promise<number> {
  await lockGrants(db)
  const acl = (await sql<AclRow>`
    select null::text as table_name, null::text as column_name, r.rolname as grantee, a.privilege_type, a.is_grantable
    from pg_namespace n cross join lateral aclexplode(n.nspacl) a left join pg_roles r on r.oid = a.grantee
    where n.nspname = ${from} and a.grantee <> n.nspowner
    union all
    select c.relname::text, null, r.rolname, a.privilege_type, a.is_grantable
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    cross join lateral aclexplode(c.relacl) a left join pg_roles r on r.oid = a.grantee
    where n.nspname = ${from} and c.relkind in ('r', 'p') and a.grantee <> c.relowner
    union all
    select c.relname::text, att.attname::text, r.rolname, a.privilege_type, a.is_grantable
    from pg_attribute att join pg_class c on c.oid = att.attrelid join pg_namespace n on n.oid = c.relnamespace
    cross join lateral aclexplode(att.attacl) a left join pg_roles r on r.oid = a.grantee
    where n.nspname = ${from} and c.relkind in ('r', 'p') and att.attnum > 0 and not att.attisdropped and a.grantee <> c.relowner`.execute(db)).rows
  if (acl.length === 0) return 0
  const present = new Set((await sql<{ table_name: string; column_name: string }>`
    select table_name, column_name from information_schema.columns where table_schema = ${to}`.execute(db)).rows
    .flatMap((c) => [c.table_name, `${c.table_name}.${c.column_name}`]))
  let given = 0
  for (const g of acl) {
    if (!PRIVILEGES.has(g.privilege_type)) continue
    if (g.table_name !== null && !present.has(g.column_name === null ? g.table_name : `${g.table_name}.${g.column_name}`)) continue
    // aclexplode names PUBLIC as grantee 0, which has no pg_roles row.
    const grantee: RawBuilder<unknown> = g.grantee === null ? sql.raw('public') : sql.id(g.grantee)
    const privilege = sql.raw(g.privilege_type)
    const option = g.is_grantable ? sql` with grant option` : sql``
    if (g.table_name === null) await sql`grant ${privilege} on schema ${sql.id(to)} to ${grantee}${option}`.execute(db)
    else if (g.column_name === null) await sql`grant ${privilege} on table ${sql.id(to, g.table_name)} to ${grantee}${option}`.execute(db)
    else await sql`grant ${privilege} (${sql.id(g.column_name)}) on table ${sql.id(to, g.table_name)} to ${grantee}${option}`.execute(db)
    given++
  }
  return given
}
