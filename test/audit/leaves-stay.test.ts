import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import t from 'tap'
import { checkAuditLog } from '../../src/audit/check.js'
import { leafHashOf, sealedRecordOf } from '../../src/audit/leaf.js'
import { sealedLeafHash } from '../../src/audit/stored-leaf.js'
import { Notary } from '../../src/audit/notary.js'
import { leavesFrom, leavesOfStream } from '../../src/audit/tree-store.js'
import { verifyHistory } from '../../src/audit/verify-history.js'
import { rebuildReadModels } from '../../src/cli/rebuild.js'
import { readingThrough } from '../../src/infrastructure/event-store/read-through.js'
import { upcasterFrom } from '../../src/infrastructure/event-store/upcasting.js'
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store.js'
import { eventRenames } from '../../schemas/events/upcasters.js'
import { build } from '../helpers/build.js'
import { spawnCli } from '../helpers/cli-process.js'
import { dbOf, deliveredShipment, sealedToTheEnd, startTestNotary } from './fixtures.js'

const OLD_NAME = Object.fromEntries(Object.entries(eventRenames).map(([old, current]) => [current, old]))

t.test('a rebuild of the read models and an upcaster change no leaf', async (t) => {
  const h = await build(t)
  const s = await deliveredShipment(t, h)
  // The history as the code before the renames stored it: the old type names in es_events.
  await sql`update es_events set type = case type when 'LabelUploaded' then 'ShipmentDocumented' when 'StatusReported' then 'CarrierStatusReported' else type end
    where stream_id = ${s.stream}`.execute(dbOf(h))
  // Sealed from here on: the notary seals what the log holds when it reads it.
  startTestNotary(t, h)
  const n = await sealedToTheEnd(h)
  const leaves = await leavesFrom(dbOf(h), 0, 100_000)
  t.equal(leaves.length, n)

  const raw = await new PostgresEventStore(h.platform.db).readStream(s.stream)
  t.same(raw.map((e) => e.type), ['ShipmentCreated', 'ShipmentDocumented', 'ShipmentReady', 'CarrierStatusReported', 'CarrierStatusReported'])
  const sealed = await leavesOfStream(dbOf(h), s.stream)
  // Leaf version 2 (issue 36): the stored bytes, read as stored (the jsonb text, the microseconds).
  const asStored = await readingThrough(h.platform.store, h.platform.db, { asStored: true }).readStream(s.stream)
  t.same(asStored.map((e) => e.type), raw.map((e) => e.type))
  t.same(sealed.map((l) => l.leafHash), asStored.map((e) => sealedLeafHash(e)), 'the leaves are of the stored names')
  t.ok(asStored.every((e) => e.stored !== undefined), 'sealed as version 2')

  // The platform reads them upcast; the history shows the current names and the stored form beside them.
  const res = await h.call('GET', `/api/v1/shipments/${s.id}/events?proof=true`, { token: s.token })
  t.equal(res.statusCode, 200, res.body)
  const doc = res.json()
  t.same(doc.events.map((e: any) => e.type), ['ShipmentCreated', 'LabelUploaded', 'ShipmentReady', 'StatusReported', 'StatusReported'])
  t.same(doc.events.map((e: any) => e.proof.stored?.type ?? null), [null, 'ShipmentDocumented', null, 'CarrierStatusReported', 'CarrierStatusReported'])
  t.same(verifyHistory(doc, h.platform.notaryKey.publicKey).findings, [], 'an upcast history verifies')

  // Another upcaster (a later rename of ShipmentReady) reads the same log: the check, as stored, finds every leaf unchanged.
  const renamedAgain = new PostgresEventStore(h.platform.db, upcasterFrom({ renames: { ...eventRenames, ShipmentReady: 'ShipmentReadyToShip' } }))
  t.equal((await renamedAgain.readStream(s.stream))[2]!.type, 'ShipmentReadyToShip', 'that store upcasts')
  const report = await checkAuditLog(dbOf(h), readingThrough(renamedAgain, h.platform.db, { asStored: true }), h.platform.notaryKey.publicKey)
  t.same(report.findings, [], 'no leaf changed with the upcaster')
  t.same(OLD_NAME.LabelUploaded, 'ShipmentDocumented')

  await rebuildReadModels({ database: h.platform.database, store: h.platform.store, batchSize: 3 })
  t.same(await leavesFrom(dbOf(h), 0, 100_000), leaves, 'a rebuild changes no leaf')
  t.same((await checkAuditLog(dbOf(h), readingThrough(h.platform.store, h.platform.db, { asStored: true }), h.platform.notaryKey.publicKey)).findings, [])
})

// The command lines as an auditor runs them: a second process on the same database.
t.test('audit-log export and check, and verify-history, as command lines', async (t) => {
  const h = await build(t)
  startTestNotary(t, h)
  const s = await deliveredShipment(t, h)
  await sealedToTheEnd(h)
  const dir = mkdtempSync(join(tmpdir(), 'audit-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const env = { DATABASE_URL: (h.platform.database as { url?: string }).url!, DATA_DIR: dir, NOTARY_KEY: h.platform.config.notaryKey! }
  const run = async (script: string, args: string[]) => {
    const p = spawnCli(script, args, env, ['EVENTSTORE_URL', 'NOTARY_KEY_FILE'])
    const code = await p.exited
    return { code, out: p.stdout() + p.stderr() }
  }
  const keyFile = join(dir, 'notary.pub.json')
  writeFileSync(keyFile, (await h.call('GET', '/audit/v1/public-key')).body)
  const exported = join(dir, 'history.json')
  const exp = await run('src/cli/audit-log.ts', ['export', '--shipment', String(s.id), '--out', exported])
  t.equal(exp.code, 0, exp.out)
  t.match(exp.out, new RegExp(`wrote 5 events of ${s.stream} to .* with proofs against the tree head of size \\d+`))
  t.equal(JSON.parse(readFileSync(exported, 'utf8')).format, 'shipping-platform/audit-history/1')
  const ok = await run('src/cli/verify-history.ts', [exported, '--public-key', keyFile])
  t.equal(ok.code, 0, ok.out)
  t.match(ok.out, /^OK: 5 events of shipment-\d+, tree head of size \d+/m)
  t.equal((await run('src/cli/audit-log.ts', ['check'])).code, 0)

  // One status row changed by hand: both name it.
  const delivered = (await sql<{ event_id: string }>`select event_id::text from es_events where stream_id = ${s.stream} and stream_version = 5`.execute(dbOf(h))).rows[0]!.event_id
  await sql`update es_events set data = data || jsonb_build_object('status', 'returned') where event_id = ${delivered}::uuid`.execute(dbOf(h))
  const again = await run('src/cli/audit-log.ts', ['export', '--shipment', String(s.id), '--out', exported])
  t.equal(again.code, 0, again.out)
  const failed = await run('src/cli/verify-history.ts', [exported, '--public-key', keyFile])
  t.equal(failed.code, 1, failed.out)
  t.match(failed.out, new RegExp(`FAIL ${s.stream} v5 StatusReported \\(event ${delivered}\\): its bytes changed since it was sealed`))
  const check = await run('src/cli/audit-log.ts', ['check'])
  t.equal(check.code, 1, check.out)
  t.match(check.out, new RegExp(`MODIFIED\\s+${s.stream} v5 StatusReported \\(event ${delivered}\\): its bytes no longer match sealed leaf \\d+`))
  t.equal((await run('src/cli/verify-history.ts', [exported])).code, 2, 'usage: the key is required')
})

// Leaves sealed before issue 36 (version 1: the record as parsed) stay valid beside version 2 ones.
t.test('leaves sealed as version 1 stay valid: the check passes and histories verify, completeness included', async (t) => {
  const h = await build(t)
  const first = await deliveredShipment(t, h)
  // A notary of the code before: it read the log without the stored forms, so it sealed version 1.
  const old = new Notary(dbOf(h), new PostgresEventStore(h.platform.db), h.platform.notaryKey, { streamMap: false })
  old.requestHead()
  while (await old.step() !== 'idle') { /* to the end of the log */ }
  await old.stop()
  const v1 = await leavesFrom(dbOf(h), 0, 100_000)
  const raw = await new PostgresEventStore(h.platform.db).readAll(null, 100_000)
  t.same(v1.map((l) => l.leafHash), raw.events.map((e) => leafHashOf(sealedRecordOf(e))), 'all sealed as version 1')
  startTestNotary(t, h)
  const second = await deliveredShipment(t, h)
  await sealedToTheEnd(h)
  t.same((await leavesFrom(dbOf(h), 0, 100_000)).slice(0, v1.length), v1, 'the version 1 leaves are kept')
  const report = await checkAuditLog(dbOf(h), readingThrough(h.platform.store, h.platform.db, { asStored: true }), h.platform.notaryKey.publicKey)
  t.same(report.findings, [], 'version 1 and 2 leaves all match their events')
  for (const s of [first, second]) {
    const res = await h.call('GET', `/api/v1/shipments/${s.id}/events?proof=true`, { token: s.token })
    const doc = res.json()
    t.equal(doc.events.filter((e: any) => e.proof?.sealed).length, s === first ? 0 : 5, 'version 2 proofs show the stored values')
    const v = verifyHistory(doc, h.platform.notaryKey.publicKey)
    t.same(v.findings, [], `${s.stream} verifies`)
    t.same(v.complete, { streamEvents: 5 }, 'and is proven complete (the stream map holds version 1 streams too)')
  }
})
