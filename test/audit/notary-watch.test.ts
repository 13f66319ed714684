import { sql } from 'kysely'
import t from 'tap'
import { checkAuditLog } from '../../src/audit/check.js'
import type { NotaryLogger } from '../../src/audit/notary.js'
import { verifyHistory } from '../../src/audit/verify-history.js'
import { readingThrough } from '../../src/infrastructure/event-store/read-through.js'
import { build, type TestApp } from '../helpers/build.js'
import { dbOf, deliveredShipment, sealedToTheEnd, startTestNotary } from './fixtures.js'

// Issue 36, points 4–6, on the engine of the pass (the embedded PostgreSQL 18, and 15 in the
// compatibility pass): someone with write access to the database takes the notary's lease, alters
// a stored subtree, moves a timestamp inside its millisecond, edits a number beyond double
// precision; someone holding a history drops its tail. Each must show.

const check = (h: TestApp, lagSeconds?: number) =>
  checkAuditLog(dbOf(h), readingThrough(h.platform.store, h.platform.db, { asStored: true }), h.platform.notaryKey.publicKey, 5000, lagSeconds === undefined ? {} : { lagSeconds })

async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const v = await read()
    if (ok(v)) return v
    if (Date.now() > end) throw new Error(`${what}: still ${JSON.stringify(v)}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

function capture(): NotaryLogger & { lines: { level: string; obj: any; msg: string }[] } {
  const lines: { level: string; obj: any; msg: string }[] = []
  return {
    lines,
    info: (obj, msg) => { lines.push({ level: 'info', obj, msg }) },
    warn: (obj, msg) => { lines.push({ level: 'warn', obj, msg }) },
    error: (obj, msg) => { lines.push({ level: 'error', obj, msg }) },
  }
}

t.test('the lease taken by hand: a log line, the lag in /metrics, /ready degraded, and the check names the unsealed events', async (t) => {
  const h = await build(t, { auditReadyLagSeconds: 1 })
  const logger = capture()
  startTestNotary(t, h, { logger, leaseMs: 600 })
  await deliveredShipment(t, h)
  await sealedToTheEnd(h)
  const ready = async () => (await h.call('GET', '/ready')).json().checks.notary
  t.equal((await ready()).status, 'ok', 'sealing: the notary check is ok')

  await sql`update audit_notary set owner = 'intruder', lease_until = now() + interval '1 hour'`.execute(dbOf(h))
  const line = await until('a standby log line', async () => logger.lines.find((l) => /standing by/.test(l.msg)), (l) => l !== undefined)
  t.equal(line!.level, 'warn')
  t.equal(line!.obj.holder, 'intruder', 'it names the holder')

  const late = await deliveredShipment(t, h)
  const notary = await until('/ready degraded', ready, (c) => c.status === 'degraded')
  t.match(notary.message, /events not sealed, the oldest for \d+ s \(AUDIT_READY_LAG_SECONDS=1\): the lease is held by intruder, which seals nothing/)
  t.ok(notary.lag_events >= 5, 'the lag in events')
  const metrics = (await h.call('GET', '/metrics')).body
  const gauge = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1])
  t.ok(gauge('audit_notary_lag_events') >= 5, 'audit_notary_lag_events')
  t.ok(gauge('audit_notary_lag_seconds') > 1, 'audit_notary_lag_seconds')
  t.equal(gauge('audit_notary_lease_held'), 1)
  t.ok(gauge('audit_notary_sealed_size') > 0)
  t.ok(gauge('audit_notary_head_age_seconds') >= 0)
  t.equal(gauge('audit_notary_refusals'), 0)

  // /ready turns degraded on the oldest event; the check counts each event past the lag, and on a
  // loaded machine the late shipment's last events may not be a second old yet.
  const report = await until('five events unsealed past the lag', () => check(h, 1), (r) => r.unsealedTooLong >= 5)
  t.ok(report.unsealedTooLong >= 5, 'unsealed past the lag: findings')
  const unsealed = new Set((await sql<{ id: string }>`
    select event_id::text as id from es_events e where not exists (select from audit_leaves l where l.event_id = e.event_id)`.execute(dbOf(h))).rows.map((r) => r.id))
  t.ok(unsealed.size >= 5 && [...unsealed].length >= report.unsealedTooLong, `the late shipment ${late.stream} among them`)
  const named = report.findings.filter((f) => f.kind === 'unsealed' && f.eventId !== undefined)
  t.equal(named.length, Math.min(20, report.unsealedTooLong), 'each named (the first 20)')
  t.ok(named.every((f) => unsealed.has(f.eventId!)), 'exactly unsealed ones')
  t.ok(report.findings.some((f) => f.kind === 'unsealed' && /lease is held by intruder/.test(f.detail)), 'and who holds the lease')
  t.same((await check(h, 3600)).findings, [], 'within the lag they are not findings')
})

t.test('a stored subtree altered: the check names it, and a notary taking over refuses (counted and said)', async (t) => {
  const h = await build(t)
  const logger = capture()
  const first = startTestNotary(t, h, { logger })
  await deliveredShipment(t, h)
  await deliveredShipment(t, h)
  const size = await sealedToTheEnd(h)
  await first.stop()
  await sql`update audit_tree_nodes set hash = sha256(hash) where level = 1 and node_index = 0`.execute(dbOf(h))
  const report = await check(h)
  t.same(report.findings.map((f) => [f.kind, f.subject]), [['subtree', 'subtree 1/0']], 'exactly that subtree')
  t.match(report.findings[0]!.detail, /its stored hash is not the hash of its leaves 0–1: the subtree table was altered/)
  // The edge of the stored tree passes through the node when the tree is 2 or 3 leaves long; else
  // a node on the edge: altering the edge's first subtree makes the notary refuse.
  const edge = (await sql<{ level: number; node_index: string }>`
    select level, node_index::text from audit_tree_nodes where level = (select max(level) from audit_tree_nodes) and node_index = 0`.execute(dbOf(h))).rows[0]!
  await sql`update audit_tree_nodes set hash = sha256(hash) where level = ${edge.level} and node_index = 0`.execute(dbOf(h))
  t.ok(2 ** edge.level <= size)
  startTestNotary(t, h, { logger })
  const refusal = await until('a refusal', async () => logger.lines.find((l) => /refuses to seal/.test(l.msg)), (l) => l !== undefined)
  t.equal(refusal!.level, 'error')
  t.match(refusal!.msg, /the stored tree's root at \d+ is not the signed one/)
  const counted = await until('the refusal counted', async () => (await check(h)).refusals, (n) => n > 0)
  t.ok(counted >= 1)
  const notary = (await h.call('GET', '/ready')).json().checks.notary
  t.ok(notary.refusals >= 1, '/ready shows the refusals')
  t.match(notary.last_refusal, /not the signed one/)
})

t.test('a history\'s tail dropped: verify-history says which versions were left out', async (t) => {
  const h = await build(t)
  startTestNotary(t, h)
  const s = await deliveredShipment(t, h)
  await sealedToTheEnd(h)
  const doc = (await h.call('GET', `/api/v1/shipments/${s.id}/events?proof=true`, { token: s.token })).json()
  const whole = verifyHistory(doc, h.platform.notaryKey.publicKey)
  t.same(whole.findings, [])
  t.same(whole.complete, { streamEvents: 5 })
  t.equal(doc.completeness.stream_events, 5)

  const dropped = { ...doc, events: doc.events.slice(0, 3) }
  const v = verifyHistory(dropped, h.platform.notaryKey.publicKey)
  t.notOk(v.ok)
  t.equal(v.verified, 3, 'what is shown still verifies')
  t.same(v.findings.map((f) => f.problem), [`the stream had 5 events as of the tree head of size ${doc.tree_head.tree_size} (its last sealed at leaf ${doc.events[4].proof.leaf_index}), the history shows 3: versions 4–5 were left out (a dropped tail)`])

  const noProof = verifyHistory({ ...dropped, completeness: undefined }, h.platform.notaryKey.publicKey)
  t.notOk(noProof.ok, 'and without the map proof it is not proven complete')
  t.match(noProof.findings[0]?.problem, /not proven complete/)
  const forgedCount = { ...dropped, completeness: { ...doc.completeness, stream_events: 3, last_leaf_index: doc.events[2].proof.leaf_index } }
  t.match(verifyHistory(forgedCount, h.platform.notaryKey.publicKey).findings.map((f) => f.problem), [/holds no entry of 3 events/], 'a rewritten count does not hold')
})

t.test('recorded_at moved by 0.5 ms: the check and verify-history name the event', async (t) => {
  const h = await build(t)
  startTestNotary(t, h)
  const s = await deliveredShipment(t, h)
  await sealedToTheEnd(h)
  const row = (await sql<{ id: string; us: string }>`
    select event_id::text as id, (extract(microseconds from recorded_at)::bigint % 1000)::text as us from es_events
    where stream_id = ${s.stream} and stream_version = 5`.execute(dbOf(h))).rows[0]!
  // Within the same millisecond when it allows: the shown (millisecond) time does not change at all.
  const shift = Number(row.us) < 500 ? '500 microseconds' : '-500 microseconds'
  const before = (await h.call('GET', `/api/v1/shipments/${s.id}/events`, { token: s.token })).json().events[4].recorded_at
  await sql`update es_events set recorded_at = recorded_at + ${shift}::interval where event_id = ${row.id}::uuid`.execute(dbOf(h))
  const after = (await h.call('GET', `/api/v1/shipments/${s.id}/events`, { token: s.token })).json().events[4].recorded_at
  t.equal(after, before, 'the millisecond the API shows is unchanged')
  const report = await check(h)
  t.same(report.findings.map((f) => [f.kind, f.eventId]), [['modified', row.id]])
  const doc = (await h.call('GET', `/api/v1/shipments/${s.id}/events?proof=true`, { token: s.token })).json()
  const v = verifyHistory(doc, h.platform.notaryKey.publicKey)
  t.equal(v.verified, 4)
  t.match(v.findings.map((f) => `${f.event}: ${f.problem}`), [new RegExp(`event ${row.id}\\): its bytes changed since it was sealed`)])
})

t.test('a jsonb number beyond double precision edited: the check and verify-history name the event', async (t) => {
  const h = await build(t)
  const s = await deliveredShipment(t, h)
  const id = (await sql<{ id: string }>`select event_id::text as id from es_events where stream_id = ${s.stream} and stream_version = 1`.execute(dbOf(h))).rows[0]!.id
  // Stored before the notary seals it (as a carrier's 20-digit reference would be).
  await sql`update es_events set data = jsonb_set(data, '{reference_number}', '12345678901234567890'::jsonb) where event_id = ${id}::uuid`.execute(dbOf(h))
  startTestNotary(t, h)
  await sealedToTheEnd(h)
  t.same((await check(h)).findings, [])
  await sql`update es_events set data = jsonb_set(data, '{reference_number}', '12345678901234567891'::jsonb) where event_id = ${id}::uuid`.execute(dbOf(h))
  t.equal(JSON.parse('12345678901234567891'), JSON.parse('12345678901234567890'), 'one double for both: a parse sees no change')
  const report = await check(h)
  t.same(report.findings.map((f) => [f.kind, f.eventId]), [['modified', id]])
  const doc = (await h.call('GET', `/api/v1/shipments/${s.id}/events?proof=true`, { token: s.token })).json()
  t.match(doc.events[0].proof.sealed.data, /"reference_number": 12345678901234567891/, 'the proof shows the stored text')
  const v = verifyHistory(doc, h.platform.notaryKey.publicKey)
  t.equal(v.verified, 4)
  t.match(v.findings.map((f) => `${f.event}: ${f.problem}`), [new RegExp(`event ${id}\\): its bytes changed since it was sealed`)])
})
