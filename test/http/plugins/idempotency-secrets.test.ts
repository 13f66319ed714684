import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import t from 'tap'
import { ADMIN_TOKEN, build, type TestApp } from '../../helpers/build.js'

/** The text of every row of every table, in every schema but the catalogs, by table. */
async function everyRowAsText(h: TestApp): Promise<Map<string, string>> {
  const tables = await sql<{ s: string; t: string }>`
    select table_schema as s, table_name as t from information_schema.tables
    where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`.execute(h.platform.db)
  const text = new Map<string, string>()
  for (const { s, t: name } of tables.rows) {
    // The whole row as text: every column, whatever its type (text, jsonb, arrays, composites).
    const rows = await sql<{ row: string }>`select r::text as row from ${sql.table(`${s}.${name}`)} as r`.execute(h.platform.db)
    text.set(`${s}.${name}`, rows.rows.map((r) => r.row).join('\n'))
  }
  return text
}

t.test('responses kept for Idempotency-Key hold no credential in the clear', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'idem-secrets-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const logLines: string[] = []
  const h = await build(t, { dataDir, blobDir: join(dataDir, 'blobs') }, {}, {
    logger: { level: 'trace', stream: { write: (line: string) => { logLines.push(line) } } },
  })

  /** The call, then the same call again: the replay answers the first body, credentials and all. */
  const callTwice = async (url: string, token: string, body: unknown, key: string) => {
    const send = () => h.call('POST', url, { token, body, headers: { 'idempotency-key': key } })
    const first = await send()
    t.equal(first.statusCode, 201, url)
    t.not(first.headers['idempotent-replayed'], 'true')
    const again = await send()
    t.equal(again.statusCode, 201, `${url} replayed`)
    t.equal(again.headers['idempotent-replayed'], 'true')
    t.equal(again.body, first.body, `${url}: the replay is the first response, byte for byte`)
    return first.json()
  }

  const orgBody = { name: 'Keyed Carrier Org', subdomain: `keyed-${process.pid}`, roles: ['carrier'], carriers_enabled: true }
  const created = await callTwice('/admin/v1/organizations', ADMIN_TOKEN, orgBody, 'org-1')
  const orgId = created.organization.id as string
  const orgToken = created.access_token as string
  t.match(orgToken, /^sk_/)

  const issued = await callTwice(`/admin/v1/organizations/${orgId}/tokens`, ADMIN_TOKEN, {}, 'token-1')
  const secondToken = issued.access_token as string
  t.match(secondToken, /^sk_/)

  const carrier = await callTwice('/api/v1/carriers', orgToken, { name: 'Keyed', integration: 'custom', visibility: 'private' }, 'carrier-1')
  t.match(carrier.api_key, /^ck_/)
  t.match(carrier.hmac_secret, /^whsec_/)

  const rotated = await callTwice(`/api/v1/carriers/${carrier.carrier.id}/keys`, orgToken, {}, 'keys-1')
  t.match(rotated.api_key, /^ck_/)
  t.match(rotated.hmac_secret, /^whsec_/)

  t.test('the replayed credentials work', async (t) => {
    t.equal((await h.call('GET', '/api/v1/carriers', { token: secondToken })).statusCode, 200, 'the issued token')
  })

  t.test('the same key with another body is still a 422', async (t) => {
    const res = await h.call('POST', '/api/v1/carriers', { token: orgToken, body: { name: 'Other', integration: 'custom', visibility: 'private' }, headers: { 'idempotency-key': 'carrier-1' } })
    t.equal(res.statusCode, 422)
    t.ok(res.json().errors.idempotency_key)
  })

  // Each credential, and its random part without the prefix (base64 / base64url).
  const credentials = { orgToken, secondToken, apiKey: carrier.api_key, hmacSecret: carrier.hmac_secret, rotatedApiKey: rotated.api_key, rotatedHmacSecret: rotated.hmac_secret }
  const needles = Object.entries(credentials).flatMap(([name, value]: [string, string]) =>
    [[name, value], [`${name} (random part)`, value.slice(value.indexOf('_') + 1)]] as const)

  t.test('no table holds an issued credential', async (t) => {
    const tables = await everyRowAsText(h)
    t.ok(tables.has('public.idempotency_keys') && tables.has('public.es_events'), 'the records and the events are among them')
    for (const [name, needle] of needles) t.same([...tables].filter(([, rows]) => rows.includes(needle)).map(([table]) => table), [], name)
  })

  t.test('the kept responses are sealed', async (t) => {
    const rows = await h.platform.db.selectFrom('idempotency_keys').select(['key', 'response_body'])
      .where('key', 'in', ['org-1', 'token-1', 'carrier-1', 'keys-1']).execute()
    t.equal(rows.length, 4)
    for (const r of rows) t.match(r.response_body, /^v1\./, r.key)
  })

  t.test('no log line holds one', async (t) => {
    t.ok(logLines.length > 0)
    const log = logLines.join('')
    for (const [name, needle] of needles) t.notOk(log.includes(needle), name)
  })

  const shipper = await h.createOrganization({ roles: ['shipper'] })
  const place = (name: string) => ({ name, street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR' })
  const postPlace = (key: string, name: string) => h.call('POST', '/api/v1/organizations/my/places', { token: shipper.token, body: place(name), headers: { 'idempotency-key': key } })
  const keptBody = async (key: string) => (await h.platform.db.selectFrom('idempotency_keys').select('response_body')
    .where('scope', '=', `org:${shipper.id}`).where('key', '=', key).executeTakeFirstOrThrow()).response_body

  t.test('a record kept before responses were sealed still replays', async (t) => {
    const first = await postPlace('legacy', 'Legacy')
    t.equal(first.statusCode, 201)
    // As the plugin wrote it before: the response body as it was sent.
    await h.platform.db.updateTable('idempotency_keys').set({ response_body: first.body }).where('scope', '=', `org:${shipper.id}`).where('key', '=', 'legacy').execute()
    const again = await postPlace('legacy', 'Legacy')
    t.equal(again.statusCode, 201)
    t.equal(again.headers['idempotent-replayed'], 'true')
    t.equal(again.body, first.body)
  })

  t.test('a sealed response opens only under its own caller and key', async (t) => {
    t.equal((await postPlace('a', 'A')).statusCode, 201)
    t.equal((await postPlace('b', 'B')).statusCode, 201)
    await h.platform.db.updateTable('idempotency_keys').set({ response_body: await keptBody('a') }).where('scope', '=', `org:${shipper.id}`).where('key', '=', 'b').execute()
    const res = await postPlace('b', 'B')
    t.equal(res.statusCode, 500, 'not the response kept for key a')
    t.same(res.json(), { message: 'Internal server error.', code: 'internal_error' })
  })
})
