import type { KeyObject } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { EventStore } from '../infrastructure/event-store/event-store.js'
import { leafVersionOf } from './stored-leaf.js'
import { mapFindings, subtreeFindings } from './check-tables.js'
import type { CheckFinding } from './check-finding.js'
import { notaryFigures } from './notary-watch.js'
import { CompactRange } from './merkle.js'
import { keyIdOf, treeHeadSignatureHolds } from './tree-head.js'
export type { CheckFinding, CheckKind } from './check-finding.js'
import { allHeads, type LeafRow, leavesFrom, type SignedHead } from './tree-store.js'

export interface CheckReport {
  /** Events in the log now. */
  events: number
  /** Leaves the notary sealed. */
  sealed: number
  /** Events after the last sealed one, not yet sealed (a finding once older than `lagSeconds`). */
  unsealed: number
  /** Of them, those older than the allowed lag: each one a finding (the notary stalled). */
  unsealedTooLong: number
  /** Refusals the notary counted (audit_notary), and the last one's reason. */
  refusals: number
  lastRefusal: string | null
  heads: number
  /** key_id of the public key the signatures were checked with; undefined: not checked. */
  keyId?: string
  /** Signed heads whose signature holds under that key. */
  verifiedHeads?: number
  findings: CheckFinding[]
}

interface Seen { eventId: string; streamId: string; streamVersion: number; type: string; recordedAt: number; matches: boolean }

export interface CheckOptions {
  /** Unsealed events older than this are findings (AUDIT_READY_LAG_SECONDS). Default 60. */
  lagSeconds?: number
}

const name = (e: { streamId: string; streamVersion: number; eventId: string; type?: string }) =>
  `${e.streamId} v${e.streamVersion}${e.type ? ` ${e.type}` : ''} (event ${e.eventId})`

/**
 * `audit-log check`: recomputes every leaf from the log as stored and compares it with the sealed
 * tree. Names each event whose bytes no longer match its leaf, each sealed event the log lost, each
 * event out of its sealed order, and each event inside the sealed part of the log that was never
 * sealed; then checks that the sealed leaves still give every signed root, and every signature.
 */
export async function checkAuditLog(db: Kysely<any>, stored: EventStore, publicKey: KeyObject | undefined, pageSize = 5000, opts: CheckOptions = {}): Promise<CheckReport> {
  const lagSeconds = opts.lagSeconds ?? 60
  const leaves: LeafRow[] = []
  for (let from = 0; ;) {
    const page = await leavesFrom(db, from, pageSize)
    leaves.push(...page)
    if (page.length < pageSize) break
    from = page[page.length - 1]!.leafIndex + 1
  }
  const leafOfEvent = new Map(leaves.map((l) => [l.eventId, l]))
  const log: Seen[] = []
  for (let checkpoint: string | null = null; ;) {
    const { events, checkpoint: next } = await stored.readAll(checkpoint, pageSize)
    for (const e of events) {
      // A leaf keeps the version it was sealed with (2: the stored bytes; 1: as parsed, before issue 36).
      const leaf = leafOfEvent.get(e.id)
      log.push({ eventId: e.id, streamId: e.streamId, streamVersion: e.streamVersion, type: e.type, recordedAt: e.recordedAt.getTime(), matches: leaf !== undefined && leafVersionOf(e, leaf.leafHash) !== undefined })
    }
    if (events.length < pageSize) break
    checkpoint = next
  }

  const findings: CheckFinding[] = []
  const lastSealedAt = log.reduce((last, e, i) => (leafOfEvent.has(e.eventId) ? i : last), -1)
  const order: { at: number; leaf: LeafRow }[] = []
  let unsealed = 0
  let unsealedTooLong = 0
  const stalledBefore = Date.now() - lagSeconds * 1000
  log.forEach((e, at) => {
    const leaf = leafOfEvent.get(e.eventId)
    if (!leaf) {
      if (at < lastSealedAt) findings.push({ kind: 'inserted', subject: name(e), eventId: e.eventId, detail: 'never sealed, yet it stands among sealed events: inserted into the log after they were sealed' })
      else unsealed++
      if (at >= lastSealedAt && e.recordedAt < stalledBefore) {
        // Unsealed this long, a forged event at the tail would stay unproven: the notary stalled.
        unsealedTooLong++
        if (unsealedTooLong <= 20) findings.push({ kind: 'unsealed', subject: name(e), eventId: e.eventId, detail: `not sealed ${Math.round((Date.now() - e.recordedAt) / 1000)} s after it was recorded (the notary may lag ${lagSeconds} s: AUDIT_READY_LAG_SECONDS)` })
      }
      return
    }
    order.push({ at, leaf })
    if (!e.matches) {
      const moved = e.streamId !== leaf.streamId || e.streamVersion !== leaf.streamVersion ? ` (sealed as ${leaf.streamId} v${leaf.streamVersion})` : ''
      findings.push({ kind: 'modified', subject: name(e), eventId: e.eventId, leafIndex: leaf.leafIndex, detail: `its bytes no longer match sealed leaf ${leaf.leafIndex}${moved}` })
    }
  })
  // In sealed order, the log's sealed events must come in leaf order; a deleted or inserted event
  // shifts nothing here, and exactly the events out of their place are named.
  const sorted = order.map((o) => o.leaf.leafIndex).sort((a, b) => a - b)
  order.forEach((o, i) => {
    if (o.leaf.leafIndex === sorted[i]) return
    const e = log[o.at]!
    findings.push({ kind: 'reordered', subject: name(e), eventId: e.eventId, leafIndex: o.leaf.leafIndex, detail: `sealed as leaf ${o.leaf.leafIndex}, but the log now has it where leaf ${sorted[i]} belongs` })
  })
  const inLog = new Set(log.map((e) => e.eventId))
  for (const leaf of leaves) {
    if (!inLog.has(leaf.eventId)) findings.push({ kind: 'missing', subject: name(leaf), eventId: leaf.eventId, leafIndex: leaf.leafIndex, detail: `sealed as leaf ${leaf.leafIndex}, gone from the log` })
  }

  // The sealed leaves themselves against every signed head.
  const heads = await allHeads(db)
  const keyId = publicKey ? keyIdOf(publicKey) : undefined
  const verifiedHeads = publicKey ? signatureFindings(heads, publicKey, findings) : undefined
  if (unsealedTooLong > 20) findings.push({ kind: 'unsealed', subject: `${unsealedTooLong - 20} more events`, detail: `also unsealed for more than ${lagSeconds} s` })
  const figures = await notaryFigures(db).catch(() => undefined)
  if (unsealedTooLong > 0 && figures) {
    findings.push({
      kind: 'unsealed', subject: 'the notary',
      detail: `${figures.leaseHeld ? `its lease is held by ${figures.owner ?? '?'}` : 'no process holds its lease'}, ${figures.sealedSize} leaves sealed`
        + (figures.lastRefusal ? `; it refused ${figures.refusals} time(s), last at ${figures.lastRefusalAt}: ${figures.lastRefusal}` : ''),
    })
  }
  // The stored subtrees and the stream map, recomputed from the sealed leaves.
  findings.push(...await subtreeFindings(db, leaves), ...await mapFindings(db, leaves, publicKey, { wrongKey: findings.some((f) => f.kind === 'key') }))
  const done = () => ({
    events: log.length, sealed: leaves.length, unsealed, unsealedTooLong, refusals: figures?.refusals ?? 0, lastRefusal: figures?.lastRefusal ?? null,
    heads: heads.length, keyId, verifiedHeads, findings,
  })
  const range = CompactRange.empty()
  let next = 0
  let rootsHold = true
  for (const head of heads) {
    if (head.treeSize > leaves.length) {
      findings.push({ kind: 'tree', subject: `tree head ${head.treeSize}`, detail: `signed over ${head.treeSize} leaves, but only ${leaves.length} are stored` })
      continue
    }
    for (; next < head.treeSize; next++) {
      const leaf = leaves[next]!
      if (leaf.leafIndex !== next) {
        findings.push({ kind: 'tree', subject: `leaf ${next}`, detail: 'missing from the sealed leaves' })
        return done()
      }
      range.append(leaf.leafHash)
    }
    if (rootsHold && !range.root().equals(head.rootHash)) {
      // Every later head fails with it: the first one says where.
      rootsHold = false
      findings.push({ kind: 'tree', subject: `tree head ${head.treeSize}`, detail: 'the sealed leaves no longer give its signed root: the audit tables were altered' })
    }
  }
  return done()
}

/**
 * Each head's signature under `publicKey`; returns how many hold. When none holds, the key is the
 * likelier culprit than the heads (a tool run without the server's NOTARY_KEY or DATA_DIR): one
 * finding names both keys instead of calling every head forged. Some holding and some not is forgery.
 */
function signatureFindings(heads: SignedHead[], publicKey: KeyObject, findings: CheckFinding[]): number {
  const keyId = keyIdOf(publicKey)
  const failed = heads.filter((head) => !treeHeadSignatureHolds(head, head.signature, publicKey))
  const verified = heads.length - failed.length
  if (failed.length === 0) return verified
  if (verified === 0) {
    const recorded = [...new Set(heads.map((h) => h.keyId))]
    const theirs = recorded.filter((id) => id !== keyId)
    findings.push({
      kind: 'key',
      subject: `notary key ${keyId}`,
      detail: `wrong key? none of the ${heads.length} signed heads verifies under it; `
        + (theirs.length > 0
          ? `they were signed with key ${theirs.join(', ')} (their key_id). Check with the server's key: its NOTARY_KEY, NOTARY_KEY_FILE or DATA_DIR, or --public-key with GET /audit/v1/public-key`
          : 'yet they name this very key (key_id): every signature was replaced, or the heads were rewritten'),
    })
    return verified
  }
  for (const head of failed) {
    const other = head.keyId !== keyId ? ` (it names key ${head.keyId})` : ''
    findings.push({ kind: 'signature', subject: `tree head ${head.treeSize}`, detail: `its signature does not hold under the notary's public key${other}` })
  }
  return verified
}
