import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import pg from 'pg'
import t, { type Test } from 'tap'
import { rebuildReadModels } from '../../src/cli/rebuild.js'
import { NOT_SECRET, SECRET_COLUMNS, SOUNDS_SECRET } from '../../src/infrastructure/database/read-model-grants.js'
import { build } from '../helpers/build.js'
import { runCli } from '../helpers/cli-process.js'
import { adminUrl, openTestDatabase } from '../helpers/test-database.js'

// Issue 31 §4: analysts had no safe way in, and a rebuild (fresh tables swapped in) dropped any
// grant made by hand. `npm run analyst-role` makes a read-only role that reads the read models but
// no token hash or sealed secret, and the rebuild gives its grants again.

const cli = (args: string[], env: Record<string, string>) => runCli(args, env, ['DATABASE_URL', 'EVENTSTORE_URL', 'DATA_DIR'])

t.test('every read-model column named like a credential is withheld from analysts or known not to be one', async (t) => {
  const db = await openTestDatabase(t, { readModels: true })
  const columns = (await sql<{ name: string }>`
    select table_name || '.' || column_name as name from information_schema.columns
    where table_schema = 'read_model' order by 1`.execute(db.db)).rows.map((r) => r.name)
  const withheld = Object.entries(SECRET_COLUMNS).flatMap(([table, names]) => names.map((n) => `${table}.${n}`))
  for (const name of withheld) t.ok(columns.includes(name), `${name} exists (the list is not stale)`)
  const unexplained = columns.filter((c) => SOUNDS_SECRET.test(c.split('.')[1]!) && !withheld.includes(c) && !NOT_SECRET.includes(c))
  t.same(unexplained, [], 'a new column named like a secret goes into SECRET_COLUMNS or NOT_SECRET')
})

t.test('on the embedded PostgreSQL it says that roles do not apply', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'analyst-embedded-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const r = await cli(['analyst-role', '--name', 'analyst'], { DATA_DIR: dir })
  t.equal(r.code, 2, r.stderr)
  t.match(r.stderr, /analyst roles are not available on the embedded PostgreSQL \(no DATABASE_URL\)/)
  t.match(r.stderr, /run this with DATABASE_URL set/)
})

t.test('a name that is not a plain role name is refused', async (t) => {
  const r = await cli(['analyst-role', '--name', 'Robert"; drop table x'], {})
  t.equal(r.code, 2)
  t.match(r.stderr, /a role name is lower-case letters, digits and _/)
  t.equal((await cli(['analyst-role'], {})).code, 2, '--name is required')
})

/** Drops the role at the end, with what it was granted in the test's database (if that is still there). */
function dropRoleAtTeardown(t: Test, role: string, databaseUrl: string): void {
  t.teardown(async () => {
    const inDb = new pg.Client({ connectionString: databaseUrl })
    try {
      await inDb.connect()
      await inDb.query(`drop owned by ${pg.escapeIdentifier(role)}`)
    } catch { /* the database was dropped first, with the grants */ } finally { await inDb.end().catch(() => undefined) }
    const admin = new pg.Client({ connectionString: adminUrl()! })
    await admin.connect()
    await admin.query(`drop role if exists ${pg.escapeIdentifier(role)}`)
    await admin.end()
  })
}

/** A connection as `role` (the test server trusts local connections: the password is stored, not checked). */
async function connectAs(t: Test, databaseUrl: string, role: string, password: string): Promise<pg.Client> {
  const url = new URL(databaseUrl)
  url.username = role
  url.password = password
  const client = new pg.Client({ connectionString: url.toString() })
  await client.connect()
  t.teardown(() => client.end().catch(() => undefined))
  return client
}

/** The SQLSTATE a statement fails with, or 'ok'. */
async function outcome(client: pg.Client, text: string): Promise<string> {
  try {
    await client.query(text)
    return 'ok'
  } catch (err) {
    return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : String(err)
  }
}

const PERMISSION_DENIED = '42501'

async function analystSees(t: Test, client: pg.Client, what: string): Promise<void> {
  t.equal((await client.query('show default_transaction_read_only')).rows[0].default_transaction_read_only, 'on', `${what}: sessions start read-only`)
  const orgs = await client.query('select id, name, subdomain from organizations order by id')
  t.ok(orgs.rows.length >= 1, `${what}: reads organizations through its search_path (${orgs.rows.length} rows)`)
  t.equal(await outcome(client, 'select token_id, kind, subject_id, created_at from access_tokens'), 'ok', `${what}: reads what a token is, without its hash`)
  t.equal(await outcome(client, 'select id, organization_id, url, events from webhooks'), 'ok', `${what}: reads webhooks without their secret`)
  t.equal(await outcome(client, 'select carrier_id, created_at from carrier_secrets'), 'ok', `${what}: reads that a carrier has secrets`)
  t.equal(await outcome(client, 'select count(*) from read_model.shipments'), 'ok', `${what}: reads shipments`)
  t.equal(await outcome(client, 'select token_hash from access_tokens'), PERMISSION_DENIED, `${what}: no token hash`)
  t.equal(await outcome(client, 'select * from access_tokens'), PERMISSION_DENIED, `${what}: no token hash through *`)
  t.equal(await outcome(client, 'select secret_encrypted from carrier_secrets'), PERMISSION_DENIED, `${what}: no sealed carrier secret`)
  t.equal(await outcome(client, 'select secret_encrypted from webhooks'), PERMISSION_DENIED, `${what}: no sealed webhook secret`)
  t.equal(await outcome(client, 'select count(*) from public.es_events'), PERMISSION_DENIED, `${what}: not the event log`)
  t.equal(await outcome(client, 'select count(*) from public.idempotency_keys'), PERMISSION_DENIED, `${what}: not the stored responses (which show credentials once)`)
  t.equal(await outcome(client, 'set transaction read write; update organizations set name = \'x\''), PERMISSION_DENIED, `${what}: cannot write even when asking for a read-write transaction`)
}

t.test('`analyst-role` makes a role that reads the read models but no secret, and a rebuild keeps its grants', async (t) => {
  const h = await build(t)
  const url = (h.platform.database as { url?: string }).url!
  const org = await h.createOrganization({ roles: ['carrier', 'shipper'], carriers_enabled: true })
  const carrier = await h.call('POST', '/api/v1/carriers', { token: org.token, body: { name: 'Analysed', integration: 'custom', visibility: 'private', service_types: [{ code: 'std', name: 'Standard' }] } })
  t.equal(carrier.statusCode, 201, carrier.body)
  const hook = await h.call('POST', '/api/v1/webhooks', { token: org.token, body: { url: 'http://127.0.0.1:9/hook', events: ['task.*'] } })
  t.equal(hook.statusCode, 201, hook.body)
  const owner = h.platform.db
  const count = async (table: string) => Number((await sql<{ n: number }>`select count(*)::int as n from ${sql.id('read_model', table)}`.execute(owner)).rows[0]!.n)
  t.ok(await count('carrier_secrets') >= 1 && await count('webhooks') >= 1 && await count('access_tokens') >= 2, 'there are secrets to withhold')

  const role = `analyst_${randomBytes(4).toString('hex')}`
  dropRoleAtTeardown(t, role, url)
  const made = await cli(['analyst-role', '--name', role], { DATABASE_URL: url })
  t.equal(made.code, 0, made.stderr)
  t.match(made.stdout, new RegExp(`created role ${role}: it reads \\d+ columns of \\d+ tables of read_model in database \\w+; withheld: access_tokens.token_hash, carrier_secrets.secret_encrypted, webhooks.secret_encrypted`))
  const password = /password \(shown once\): (\S+)/.exec(made.stdout)?.[1]
  t.ok(password && password.length >= 24, 'a generated password is shown once')
  const stored = async () => (await sql<{ p: string | null }>`select rolpassword as p from pg_authid where rolname = ${role}`.execute(owner)).rows[0]?.p
  t.match(await stored(), /^SCRAM-SHA-256\$/, 'and set')
  const roleRow = (await sql<{ rolsuper: boolean; rolcreaterole: boolean; rolcreatedb: boolean }>`select rolsuper, rolcreaterole, rolcreatedb from pg_roles where rolname = ${role}`.execute(owner)).rows[0]
  t.same(roleRow, { rolsuper: false, rolcreaterole: false, rolcreatedb: false }, 'an unprivileged role')

  await analystSees(t, await connectAs(t, url, role, password!), 'before a rebuild')

  const rebuilt = await rebuildReadModels({ database: h.platform.database, store: h.platform.store })
  t.ok(rebuilt.grantsKept > 30, `the rebuild gave the role's grants again (${rebuilt.grantsKept})`)
  await analystSees(t, await connectAs(t, url, role, password!), 'after a rebuild')

  // Run again with a password file: the same grants, a new password, nothing shown.
  const dir = mkdtempSync(join(tmpdir(), 'analyst-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const before = await stored()
  writeFileSync(join(dir, 'password'), 'another secret\n')
  const again = await cli(['analyst-role', '--name', role, '--password-file', join(dir, 'password')], { DATABASE_URL: url })
  t.equal(again.code, 0, again.stderr)
  t.match(again.stdout, `updated role ${role}`)
  t.notMatch(again.stdout, /password/)
  t.not(await stored(), before, 'the password was replaced')
  await analystSees(t, await connectAs(t, url, role, 'another secret'), 'after a second run')

  // The CLI's rebuild, in another process, keeps them too and says so.
  const cliRebuild = await cli(['rebuild'], { DATABASE_URL: url })
  t.equal(cliRebuild.code, 0, cliRebuild.stderr)
  t.match(cliRebuild.stdout, /; \d+ grants on the read models kept \(analyst roles\)/)
  await analystSees(t, await connectAs(t, url, role, 'another secret'), 'after `npm run rebuild`')
})

t.test('a superuser is not made an analyst', async (t) => {
  const db = await openTestDatabase(t, { readModels: true })
  const r = await cli(['analyst-role', '--name', 'postgres'], { DATABASE_URL: db.url! })
  t.equal(r.code, 2)
  t.match(r.stderr, /role postgres is a superuser/)
})
