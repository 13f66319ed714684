import type { Kysely } from 'kysely'
import { sql } from 'kysely'
import type { Static } from 'typebox'
import type { EventHistory, SignedTreeHead } from '../../schemas/api/audit.js'
import type { EventStore, RecordedEvent } from '../infrastructure/event-store/event-store.js'
import { readingThrough } from '../infrastructure/event-store/read-through.js'
import type { Platform } from '../platform.js'
import { inclusionProofs } from './proofs.js'
import { completenessAt, sealedForm } from './completeness.js'
import { latestHead, type LeafRow, leavesOfStream, type SignedHead } from './tree-store.js'

const b64 = (b: Buffer) => b.toString('base64')

/** A signed head as the API shows it. */
export const headJson = (h: SignedHead): Static<typeof SignedTreeHead> => ({
  tree_size: h.treeSize, root_hash: b64(h.rootHash), timestamp: h.timestamp, signed_at: new Date(h.timestamp).toISOString(),
  signature: b64(h.signature), key_id: h.keyId, algorithm: 'Ed25519',
})

/** An event as every history endpoint shows it (DESIGN §3.8). */
export const historyEvent = (e: RecordedEvent) => ({
  position: e.position, stream_version: e.streamVersion, type: e.type, data: e.data, metadata: e.metadata, recorded_at: e.recordedAt.toISOString(),
})

export interface ProofSources {
  db: Kysely<any>
  /** The same log read as stored: the sealed type and payload of an event shown upcast. */
  stored: EventStore
  /** Asks this process's notary for a head now; absent where no notary runs here. */
  requestHead?: () => void
  /** How long to wait for a head that covers the history's last event. */
  waitMs: number
}

/** Whether some process's notary holds a live lease: else nobody will sign, and waiting is pointless. */
async function notaryLive(db: Kysely<any>): Promise<boolean> {
  const r = await sql<{ n: number }>`select count(*)::int as n from audit_notary where lease_until > clock_timestamp()`.execute(db)
  return Number(r.rows[0]?.n ?? 0) > 0
}

/** The latest head and the stream's leaves under it, once they cover every shown event (or the wait is over). */
async function coveringHead(src: ProofSources, streamId: string, ids: string[]): Promise<{ head: SignedHead | undefined; leaves: LeafRow[] }> {
  const deadline = Date.now() + src.waitMs
  for (let asked = false; ; asked = true) {
    const [head, leaves] = await Promise.all([latestHead(src.db), leavesOfStream(src.db, streamId)])
    const covered = new Set(leaves.filter((l) => head && l.leafIndex < head.treeSize).map((l) => l.eventId))
    if (ids.every((id) => covered.has(id)) || Date.now() >= deadline || (!asked && !src.requestHead && !await notaryLive(src.db))) {
      return { head, leaves: head ? leaves.filter((l) => l.leafIndex < head.treeSize) : [] }
    }
    src.requestHead?.()
    await new Promise((r) => setTimeout(r, 50))
  }
}

/**
 * A history with its proofs: each event's leaf and inclusion proof against the latest signed head
 * (null for an event the tree does not hold), and every leaf the notary sealed for this stream whose
 * event the log no longer has. What it shows is checked offline by `npm run verify-history`.
 */
export async function provenHistory(src: ProofSources, streamId: string, events: RecordedEvent[]): Promise<Static<typeof EventHistory>> {
  let { head, leaves } = await coveringHead(src, streamId, events.map((e) => e.id))
  if (!head) return { stream_id: streamId, tree_head: null, events: events.map((e) => ({ ...historyEvent(e), event_id: e.id, proof: null })), sealed_absent: [], completeness: null }
  // The stream map's proof at the same head; a head that lands meanwhile is taken instead.
  let completeness = await completenessAt(src.db, streamId, head.treeSize)
  for (let tries = 0; !completeness && tries < 3; tries++) {
    const later = await latestHead(src.db)
    if (!later || later.treeSize === head.treeSize) break
    head = later
    leaves = (await leavesOfStream(src.db, streamId)).filter((l) => l.leafIndex < later.treeSize)
    completeness = await completenessAt(src.db, streamId, head.treeSize)
  }
  const asStored = new Map((await src.stored.readStream(streamId)).map((e) => [e.id, e]))
  const leafOf = new Map(leaves.map((l) => [l.eventId, l]))
  const shown = new Set(events.map((e) => e.id))
  const absent = leaves.filter((l) => !shown.has(l.eventId))
  const sealed = events.filter((e) => leafOf.has(e.id))
  const paths = await inclusionProofs(src.db, [...sealed.map((e) => leafOf.get(e.id)!.leafIndex), ...absent.map((l) => l.leafIndex)], head.treeSize)
  const pathOf = new Map(sealed.map((e, i) => [e.id, paths[i]!]))
  return {
    stream_id: streamId,
    tree_head: headJson(head),
    events: events.map((e) => {
      const leaf = leafOf.get(e.id)
      if (!leaf) return { ...historyEvent(e), event_id: e.id, proof: null }
      const raw = asStored.get(e.id)
      const upcast = raw !== undefined && (raw.type !== e.type || raw.schemaVersion !== e.schemaVersion)
      return {
        ...historyEvent(e),
        event_id: e.id,
        proof: {
          leaf_index: leaf.leafIndex, leaf_hash: b64(leaf.leafHash), stream_id: streamId, event_id: e.id, schema_version: raw?.schemaVersion ?? e.schemaVersion,
          ...(upcast ? { stored: { type: raw.type, schema_version: raw.schemaVersion, data: raw.data } } : {}),
          ...sealedField(raw, leaf.leafHash),
          audit_path: pathOf.get(e.id)!.map(b64),
        },
      }
    }),
    sealed_absent: absent.map((l, i) => ({
      leaf_index: l.leafIndex, leaf_hash: b64(l.leafHash), event_id: l.eventId, stream_version: l.streamVersion, audit_path: paths[sealed.length + i]!.map(b64),
    })),
    completeness: completeness ?? null,
  }
}

const sealedField = (raw: RecordedEvent | undefined, leafHash: Buffer) => {
  const form = sealedForm(raw, leafHash)
  return form ? { sealed: form } : {}
}

/** What the four history endpoints answer: the events, and with `?proof=true` their proofs. */
export async function historyResponse(platform: Platform, streamId: string, events: RecordedEvent[], query: { proof?: boolean | undefined }): Promise<Static<typeof EventHistory>> {
  if (!query.proof) return { events: events.map(historyEvent) }
  const notary = platform.background?.notary
  return provenHistory({
    db: platform.db,
    stored: readingThrough(platform.store, platform.db, { asStored: true }),
    ...(notary ? { requestHead: () => notary.requestHead() } : {}),
    waitMs: platform.config.notarySignIntervalMs + 3000,
  }, streamId, events)
}
