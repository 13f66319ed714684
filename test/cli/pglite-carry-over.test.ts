import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { type Kysely, sql } from 'kysely'
import t, { type Test } from 'tap'
import { openDatabase, type DatabaseHandle } from '../../src/infrastructure/database/connection.js'
import { migrateInfrastructure, migrateReadModels } from '../../src/infrastructure/database/migrate.js'
import { CarryOverFailed, carryOverIfPresent, carryOverPglite } from '../../src/cli/carry-over/pglite-carry-over.js'
import { createPlatform } from '../../src/platform.js'
import { buildApp } from '../../src/http/app.js'
import { modules } from '../../src/modules.js'
import { build, testApp, testConfig } from '../helpers/build.js'
import { createScratchDatabase } from '../helpers/test-database.js'
import { address, oldInstallation } from '../helpers/old-pglite.js'
import { runCli } from '../helpers/cli-process.js'

const READ_MODELS = ['organizations', 'access_tokens', 'contracts', 'shipments', 'shipment_packages', 'shipment_status_history', 'shipment_listings', 'shipment_listing_counts', 'addresses', 'tasks', 'users', 'places']

async function scratchTarget(t: Test): Promise<DatabaseHandle & { url: string }> {
  const url = await createScratchDatabase(t)
  const handle = await openDatabase({ url, poolSize: 5 })
  await migrateInfrastructure(handle.db)
  await migrateReadModels(handle.db)
  return Object.assign(handle, { url })
}

const tempDir = (t: Test) => {
  const dir = mkdtempSync(join(tmpdir(), 'carry-over-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Position and id of every event, in position order. */
const eventsOf = async (rows: (text: string) => Promise<{ p: string; id: string }[]>) =>
  (await rows(`select global_position::text as p, event_id::text as id from es_events order by global_position`)).map((r) => `${r.p}:${r.id}`)

/** Per read-model table, its rows as JSON (timestamps in UTC), sorted: the same on any engine. */
async function readModelRows(rows: (text: string) => Promise<{ j: string }[]>): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {}
  for (const table of READ_MODELS) out[table] = (await rows(`select to_jsonb(x)::text as j from read_model.${table} x`)).map((r) => r.j).sort()
  return out
}

async function oldSide(dir: string) {
  const client = new PGlite(dir)
  await client.waitReady
  await client.query(`set timezone to 'UTC'`)
  return { client, rows: async <T>(text: string) => (await client.query<T>(text)).rows }
}

const newSide = (db: Kysely<any>) => async <T>(text: string): Promise<T[]> =>
  db.transaction().execute(async (trx) => {
    await sql`set local timezone to 'UTC'`.execute(trx)
    return (await sql.raw<T>(text).execute(trx)).rows
  })

t.test('an old PGlite database is carried over: the same events in the same order, the same read models, the same answers; the old folder moved aside', async (t) => {
  const dir = tempDir(t)
  const pgliteDir = join(dir, 'pglite')
  const old = await oldInstallation(pgliteDir, { shipments: 12 })
  const target = await scratchTarget(t)
  const lines: string[] = []
  const r = await carryOverPglite({ pgliteDir, target, log: (l) => lines.push(l), batchSize: 7 })

  t.equal(existsSync(pgliteDir), false, 'the old folder is no longer where the platform looks')
  t.equal(r.movedTo, `${pgliteDir}.carried-over`)
  t.ok(existsSync(join(r.movedTo, 'PG_VERSION')), 'the old database kept, whole, beside it')
  t.match(lines.at(-1), /moved to .*pglite\.carried-over.*may be deleted/)
  t.ok(lines.some((l) => /^verified: the same \d+ events in the same order/.test(l)), 'it says what it verified')
  t.ok(lines.some((l) => /ETA tables were not compared: the old ETA engine never ran/.test(l)), 'and what it could not (no background ran in the old one)')

  const before = await oldSide(r.movedTo)
  t.teardown(() => before.client.close())
  const oldEvents = await eventsOf(before.rows)
  t.ok(oldEvents.length > 40, `${oldEvents.length} events`)
  t.equal(r.events, oldEvents.length)
  t.same(await eventsOf(newSide(target.db)), oldEvents, 'the same event ids at the same positions, in the same order')
  t.same(await readModelRows(newSide(target.db)), await readModelRows(before.rows), 'every read model rebuilt row for row')
  const oldShipmentSeq = (await before.rows<{ v: string }>(`select last_value::text as v from shipment_id_seq`))[0]!.v

  // The API on the new database: the same shipments, and new writes after the old ones.
  const h = await build(t, {}, {}, { database: target })
  for (const id of old.shipmentIds) {
    const res = await h.call('GET', `/api/v1/shipments/${id}`, { token: old.shipperToken })
    t.same(res.json(), old.shipments.get(id), `shipment ${id} answers as before`)
  }
  t.same((await h.call('GET', '/api/v1/tasks', { token: old.carrierToken })).json(), old.tasks, 'the tasks listing answers as before')
  const created = await h.call('POST', '/api/v1/shipments', {
    token: old.shipperToken,
    body: { carrier_id: old.carrierId, origin: address(), destination: address({ name: 'After' }), packages: [{ grams: 5, length: 1, width: 1, height: 1 }] },
  })
  t.equal(created.statusCode, 201, created.body)
  t.equal(created.json().shipment.id, Number(oldShipmentSeq) + 1, 'shipment numbers carry on from the old ones')
  const last = (await sql<{ p: string }>`select max(global_position)::text as p from es_events`.execute(target.db)).rows[0]!.p
  t.ok(Number(last) > Number(oldEvents.at(-1)!.split(':')[0]), 'a new event comes after every carried one')
  t.equal(await h.platform.projections.waitFor(await h.platform.store.headPosition(), 10_000), true, 'the projector follows the carried log')
})

t.test('a carry-over that does not verify keeps the old folder and empties the target again; one into a database with events is refused; npm run carry-over-pglite and the platform at its start carry it over', async (t) => {
  const dir = tempDir(t)
  const pgliteDir = join(dir, 'pglite')
  const old = await oldInstallation(pgliteDir, { shipments: 4 })

  // A database that already has a log is never mixed with the old one.
  const busy = await scratchTarget(t)
  await sql`insert into es_streams (stream_id, stream_type, version) values ('x-1', 'x', 1)`.execute(busy.db)
  await sql`insert into es_events (stream_id, stream_version, event_id, type, data, metadata)
    values ('x-1', 1, gen_random_uuid(), 'XHappened', '{}', '{}')`.execute(busy.db)
  await t.rejects(carryOverPglite({ pgliteDir, target: busy }), { name: 'CarryOverRefused', message: /already has 1 events/ })
  t.ok(existsSync(join(pgliteDir, 'PG_VERSION')), 'refused: the old folder untouched')
  await busy.close()

  // The old read models disagree with their own log (a row changed by hand): the rebuilt ones differ.
  const tampered = old.shipmentIds[1]!
  const edit = async (status: string) => {
    const c = new PGlite(pgliteDir)
    const was = (await c.query<{ status: string }>(`select status from read_model.shipments where id = $1`, [tampered])).rows[0]!.status
    await c.query(`update read_model.shipments set status = $1 where id = $2`, [status, tampered])
    await c.close()
    return was
  }
  const truth = await edit('delivered')
  const target = await scratchTarget(t)
  const failed = await carryOverPglite({ pgliteDir, target }).catch((err: unknown) => err)
  t.type(failed, CarryOverFailed)
  t.match((failed as CarryOverFailed).differences, [/^read model shipments: /])
  t.match((failed as Error).message, /old one was kept/)
  t.ok(existsSync(join(pgliteDir, 'PG_VERSION')), 'the old folder stays where it was')
  t.equal(existsSync(`${pgliteDir}.carried-over`), false)
  const counts = (await sql<{ events: number; shipments: number; tokens: number; seq: boolean }>`
    select (select count(*)::int from es_events) as events, (select count(*)::int from read_model.shipments) as shipments,
           (select count(*)::int from idempotency_keys) + (select count(*)::int from read_model.access_tokens) as tokens,
           (select is_called from shipment_id_seq) as seq`.execute(target.db)).rows[0]!
  t.same(counts, { events: 0, shipments: 0, tokens: 0, seq: false }, 'the target is empty again, its counters where they were')
  await target.close()

  // Put right, `npm run carry-over-pglite` carries it over into the same database.
  await edit(truth)
  const env = { DATA_DIR: dir, DATABASE_URL: target.url }
  const r = await runCli(['carry-over-pglite'], env, [])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /^carried over \d+ events \(\d+ rows\) in [\d.]+ s \(copy .*events\/s\)$/m)
  t.match(r.stdout, /moved to .*pglite\.carried-over; it is no longer used and may be deleted/)
  t.equal(existsSync(pgliteDir), false)
  const again = await runCli(['carry-over-pglite', '--from', `${pgliteDir}.carried-over`], env, [])
  t.equal(again.code, 2)
  t.match(again.stderr, /already has \d+ events: an old log is never mixed into another one/)
  t.ok(existsSync(join(`${pgliteDir}.carried-over`, 'PG_VERSION')), 'refused: the folder left as it was')
  const none = await runCli(['carry-over-pglite'], env, [])
  t.equal(none.code, 2, none.stderr)
  t.match(none.stderr, /carry-over-pglite: .*pglite holds no embedded database/)

  // The old folder is whole: put back, the platform carries it over at its start (as `npm start` has it do) into another database.
  renameSync(`${pgliteDir}.carried-over`, pgliteDir)
  const fresh = await createScratchDatabase(t)
  const platform = await createPlatform({ ...testConfig(), dataDir: dir, databaseUrl: fresh }, { carryOver: carryOverIfPresent })
  const app = await buildApp(platform, { logger: false, modules })
  t.teardown(async () => { await app.close(); await platform.close() })
  t.equal(existsSync(pgliteDir), false)
  t.ok(existsSync(join(`${pgliteDir}.carried-over`, 'PG_VERSION')))
  const h = testApp(app, platform)
  for (const id of old.shipmentIds) t.same((await h.call('GET', `/api/v1/shipments/${id}`, { token: old.shipperToken })).json(), old.shipments.get(id))
})
