import { sql } from 'kysely'
import t, { type Test } from 'tap'
import { checkAuditLog, type CheckKind } from '../../src/audit/check.js'
import { verifyHistory } from '../../src/audit/verify-history.js'
import { readingThrough } from '../../src/infrastructure/event-store/read-through.js'
import { build, type TestApp } from '../helpers/build.js'
import { dbOf, deliveredShipment, sealedToTheEnd, startTestNotary } from './fixtures.js'

// Someone with write access to the database edits es_events after the notary sealed it. Each kind
// of edit must be named, event by event: by `audit-log check` (recomputing the tree from the log)
// and by verify-history on a history exported after the edit.

interface EventRow { event_id: string; stream_version: number; type: string; tx: string }

async function sealedLog(t: Test) {
  const h = await build(t)
  startTestNotary(t, h)
  const a = await deliveredShipment(t, h)
  const b = await deliveredShipment(t, h)
  await sealedToTheEnd(h)
  const events = async (stream: string) => (await sql<EventRow>`
    select event_id::text as event_id, stream_version::int as stream_version, type, transaction_id::text as tx
    from es_events where stream_id = ${stream} order by stream_version`.execute(dbOf(h))).rows
  return { h, a, b, aEvents: await events(a.stream), bEvents: await events(b.stream) }
}

const check = (h: TestApp) => checkAuditLog(dbOf(h), readingThrough(h.platform.store, h.platform.db, { asStored: true }), h.platform.notaryKey.publicKey)

/** The shipment's history fetched again, with proofs, and checked offline. */
async function freshExport(h: TestApp, shipment: { id: number; token: string }) {
  const res = await h.call('GET', `/api/v1/shipments/${shipment.id}/events?proof=true`, { token: shipment.token })
  if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
  return verifyHistory(res.json(), h.platform.notaryKey.publicKey)
}

const named = (findings: { kind?: CheckKind; subject?: string; event?: string; problem?: string; detail?: string }[], eventId: string) =>
  findings.filter((f) => (f.subject ?? f.event ?? '').includes(eventId))

t.test('before any edit: the check finds nothing and the exported history verifies', async (t) => {
  const { h, a } = await sealedLog(t)
  const report = await check(h)
  t.same(report.findings, [])
  t.equal(report.sealed, report.events)
  t.equal(report.unsealed, 0)
  const v = await freshExport(h, a)
  t.same(v.findings, [])
  t.ok(v.ok)
  t.equal(v.verified, 5, 'created, label, ready, received, delivered')
})

t.test('an event\'s data updated: named by the check as modified and by verify-history as changed since sealed', async (t) => {
  const { h, a, aEvents } = await sealedLog(t)
  const delivered = aEvents.find((e) => e.stream_version === 5)!
  t.equal(delivered.type, 'StatusReported')
  await sql`update es_events set data = data || jsonb_build_object('status', 'returned') where event_id = ${delivered.event_id}::uuid`.execute(dbOf(h))
  const report = await check(h)
  t.same(report.findings.map((f) => [f.kind, f.eventId]), [['modified', delivered.event_id]], 'exactly that event, as modified')
  t.match(report.findings[0]!.subject, `${a.stream} v5 StatusReported`)
  const v = await freshExport(h, a)
  t.notOk(v.ok)
  t.equal(v.verified, 4, 'the other four still verify')
  t.same(v.findings.length, 1)
  t.match(named(v.findings, delivered.event_id)[0]?.problem, /bytes changed since it was sealed/)
})

t.test('an event deleted: named by the check as missing and by verify-history as sealed but absent', async (t) => {
  const { h, a, aEvents } = await sealedLog(t)
  const received = aEvents.find((e) => e.stream_version === 4)!
  await sql`delete from es_events where event_id = ${received.event_id}::uuid`.execute(dbOf(h))
  const report = await check(h)
  t.same(report.findings.map((f) => [f.kind, f.eventId]), [['missing', received.event_id]])
  const v = await freshExport(h, a)
  t.notOk(v.ok)
  t.equal(v.verified, 4)
  t.match(named(v.findings, received.event_id)[0]?.problem, /sealed at leaf \d+ of the signed tree, but missing from the history/)
  t.ok(v.findings.some((f) => /versions 4 are missing|version.*missing/.test(f.problem)), 'and the gap in the versions')
})

t.test('two events swapped in the log\'s order: the check names both as reordered', async (t) => {
  const { h, a, aEvents } = await sealedLog(t)
  const [received, delivered] = [aEvents[3]!, aEvents[4]!]
  t.not(received.tx, delivered.tx, 'two transactions')
  await sql`update es_events set transaction_id = case event_id when ${received.event_id}::uuid then ${delivered.tx}::xid8 else ${received.tx}::xid8 end
    where event_id in (${received.event_id}::uuid, ${delivered.event_id}::uuid)`.execute(dbOf(h))
  const report = await check(h)
  t.same(report.findings.map((f) => f.kind), ['reordered', 'reordered'])
  t.same(report.findings.map((f) => f.eventId).sort(), [received.event_id, delivered.event_id].sort(), 'exactly the two swapped')
  // The shipment's own history (by stream version) did not change: it still verifies.
  t.ok((await freshExport(h, a)).ok)
})

t.test('two events swapped within a shipment\'s history: both named by the check and by verify-history', async (t) => {
  const { h, a, aEvents } = await sealedLog(t)
  const [received, delivered] = [aEvents[3]!, aEvents[4]!]
  await sql`update es_events set stream_version = -1 where event_id = ${received.event_id}::uuid`.execute(dbOf(h))
  await sql`update es_events set stream_version = 4 where event_id = ${delivered.event_id}::uuid`.execute(dbOf(h))
  await sql`update es_events set stream_version = 5 where event_id = ${received.event_id}::uuid`.execute(dbOf(h))
  const report = await check(h)
  t.same(report.findings.map((f) => [f.kind, f.eventId]).sort(), [['modified', delivered.event_id], ['modified', received.event_id]].sort())
  t.ok(report.findings.every((f) => /sealed as shipment-\d+ v[45]/.test(f.detail)), 'each says where it was sealed')
  const v = await freshExport(h, a)
  t.equal(v.verified, 3)
  t.equal(named(v.findings, received.event_id).length, 1)
  t.equal(named(v.findings, delivered.event_id).length, 1)
})

t.test('a forged event inserted among sealed ones: named by the check as inserted and by verify-history as not in the tree', async (t) => {
  const { h, a, b, aEvents, bEvents } = await sealedLog(t)
  const forged = '0b0f0b0f-0000-4000-8000-00000000f0f0'
  // Dated and placed in an early transaction, as if the carrier had reported a return long ago.
  await sql`
    insert into es_events (transaction_id, stream_id, stream_version, event_id, type, schema_version, data, metadata, recorded_at)
    select ${aEvents[1]!.tx}::xid8, stream_id, 6, ${forged}::uuid, type, schema_version, data || jsonb_build_object('status', 'returned'), metadata, recorded_at
    from es_events where event_id = ${aEvents[4]!.event_id}::uuid`.execute(dbOf(h))
  const report = await check(h)
  t.same(report.findings.map((f) => [f.kind, f.eventId]), [['inserted', forged]])
  t.match(report.findings[0]!.subject, `${a.stream} v6 StatusReported`)
  const v = await freshExport(h, a)
  t.equal(v.verified, 5)
  t.match(named(v.findings, forged)[0]?.problem, /not in the signed tree/)
  t.ok((await freshExport(h, b)).ok, 'the other shipment is untouched')
  t.equal(bEvents.length, 5)
})

t.test('the audit tables edited to match an edit: the check says which signed head no longer holds', async (t) => {
  const { h, aEvents } = await sealedLog(t)
  await sql`update audit_leaves set leaf_hash = sha256(leaf_hash) where event_id = ${aEvents[2]!.event_id}::uuid`.execute(dbOf(h))
  const report = await check(h)
  t.ok(report.findings.some((f) => f.kind === 'tree' && /no longer give its signed root/.test(f.detail)), 'the sealed leaves no longer give a signed root')
  t.ok(report.findings.some((f) => f.kind === 'modified' && f.eventId === aEvents[2]!.event_id), 'and the event no longer matches the (edited) leaf')
})
