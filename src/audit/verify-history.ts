import type { KeyObject } from 'node:crypto'
import { leafHashOf, type SealedRecord } from './leaf.js'
import { verifyInclusion } from './merkle-verify.js'
import { treeHeadSignatureHolds } from './tree-head.js'
import { messageOf } from '../shared/thrown.js'
import { leafV2Hash } from './stored-leaf.js'
import { completenessProblems, type ShownEvent, storedRecordFrom } from './verify-complete.js'

/**
 * Offline verification of a history with proofs (`GET …/events?proof=true`, or the file `npm run
 * audit-log -- export` writes): nothing but the document and the notary's public key. No I/O.
 */

export interface Finding {
  /** The event it is about, e.g. `shipment-42 v3 StatusReported (event 0b6…)`; absent for the head. */
  event?: string
  problem: string
}

export interface Verification {
  ok: boolean
  streamId: string | undefined
  treeSize: number | undefined
  /** Events whose bytes and proof hold. */
  verified: number
  /** Proven to be every event of the stream as of the tree head (the stream map's proof held). */
  complete?: { streamEvents: number }
  findings: Finding[]
}

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const b64 = (v: unknown): Buffer | undefined => (typeof v === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(v) ? Buffer.from(v, 'base64') : undefined)
const hashes = (v: unknown): Buffer[] | undefined => {
  if (!Array.isArray(v)) return undefined
  const out = v.map(b64)
  return out.every((h): h is Buffer => h !== undefined) ? out : undefined
}

function describe(streamId: unknown, e: Json, proof: Json | undefined): string {
  const id = e.event_id ?? proof?.event_id ?? '?'
  return `${String(streamId ?? '?')} v${String(e.stream_version ?? '?')} ${String(e.type ?? '?')} (event ${String(id)})`
}

export function verifyHistory(doc: unknown, publicKey: KeyObject): Verification {
  const findings: Finding[] = []
  const fail = (problem: string, event?: string) => { findings.push(event ? { event, problem } : { problem }) }
  if (!isObject(doc) || !Array.isArray(doc.events)) {
    return { ok: false, streamId: undefined, treeSize: undefined, verified: 0, findings: [{ problem: 'not a history: no `events` list' }] }
  }
  const streamId = typeof doc.stream_id === 'string' ? doc.stream_id : undefined
  const head = isObject(doc.tree_head) ? doc.tree_head : undefined
  const size = typeof head?.tree_size === 'number' ? head.tree_size : undefined
  const root = b64(head?.root_hash)
  if (!head || size === undefined || !root || typeof head.timestamp !== 'number') {
    fail('no signed tree head: the history was fetched without ?proof=true, or before any head was signed')
    return { ok: false, streamId, treeSize: size, verified: 0, findings }
  }
  const signature = b64(head.signature)
  if (!signature || !treeHeadSignatureHolds({ treeSize: size, rootHash: root, timestamp: head.timestamp }, signature, publicKey)) {
    fail(`the tree head's signature (size ${size}) does not hold under this public key: nothing below is proven`)
  }

  let verified = 0
  const leavesSeen = new Map<number, string>()
  let expectedVersion = 1
  const shown: ShownEvent[] = []
  for (const item of doc.events) {
    if (!isObject(item)) { fail('an entry of `events` is not an object'); continue }
    const proof = isObject(item.proof) ? item.proof : undefined
    const name = describe(proof?.stream_id ?? streamId, item, proof)
    const version = item.stream_version
    if (typeof version === 'number') shown.push({ version, leafIndex: isObject(proof) && typeof proof.leaf_index === 'number' ? proof.leaf_index : undefined })
    if (typeof version === 'number') {
      if (version > expectedVersion) fail(`versions ${expectedVersion}${version - 1 > expectedVersion ? `–${version - 1}` : ''} are missing from the history before it`, name)
      else if (version < expectedVersion) fail(`out of order: it follows version ${expectedVersion - 1}`, name)
      expectedVersion = Math.max(expectedVersion, version + 1)
    }
    if (!proof) { fail('not in the signed tree: no inclusion proof (an event the notary never sealed, e.g. one inserted into the log; or one newer than the head: export again)', name); continue }
    if (streamId !== undefined && proof.stream_id !== streamId) fail(`its proof names stream ${String(proof.stream_id)}, not ${streamId}`, name)
    if (item.event_id !== undefined && item.event_id !== proof.event_id) fail(`its proof is for event ${String(proof.event_id)}`, name)
    const index = proof.leaf_index
    const path = hashes(proof.audit_path)
    const sealedLeaf = b64(proof.leaf_hash)
    if (typeof index !== 'number' || !path || !sealedLeaf) { fail('its proof is malformed (leaf_index, leaf_hash, audit_path)', name); continue }
    if (leavesSeen.has(index)) fail(`claims leaf ${index}, which ${leavesSeen.get(index)} claims too`, name)
    leavesSeen.set(index, name)
    const stored = isObject(proof.stored) ? proof.stored : undefined
    const record: SealedRecord = {
      stream_id: String(proof.stream_id), stream_version: Number(version), event_id: String(proof.event_id),
      type: String(stored?.type ?? item.type), schema_version: Number(stored?.schema_version ?? proof.schema_version),
      data: stored ? stored.data : item.data, metadata: item.metadata, recorded_at: String(item.recorded_at),
    }
    let computed: Buffer
    if (isObject(proof.sealed)) {
      // Leaf version 2: the stored values, byte for byte; what is shown must be them.
      const v2 = storedRecordFrom(item, proof, proof.sealed)
      if (typeof v2 === 'string') { fail(v2, name); continue }
      for (const d of v2.departures) fail(d, name)
      computed = leafV2Hash(v2.record)
      if (v2.departures.length > 0) continue
    } else {
      try { computed = leafHashOf(record) } catch (err) { fail(`cannot be encoded: ${messageOf(err)}`, name); continue }
    }
    const fromShown = verifyInclusion(index, size, computed, path, root)
    if (fromShown === undefined) { verified++; continue }
    // The event as shown is not in the tree. If the leaf the server says it sealed is, the event changed since.
    if (!computed.equals(sealedLeaf) && verifyInclusion(index, size, sealedLeaf, path, root) === undefined) {
      fail(`its bytes changed since it was sealed: as shown it hashes to ${computed.toString('base64')}, leaf ${index} of the signed tree is ${sealedLeaf.toString('base64')} (data, metadata, type, version, id or time altered)`, name)
    } else {
      fail(`its inclusion proof for leaf ${index} fails: ${fromShown}`, name)
    }
  }
  for (const item of Array.isArray(doc.sealed_absent) ? doc.sealed_absent : []) {
    if (!isObject(item)) continue
    const name = `${streamId ?? '?'} v${String(item.stream_version)} (event ${String(item.event_id)})`
    const leaf = b64(item.leaf_hash)
    const path = hashes(item.audit_path)
    const holds = typeof item.leaf_index === 'number' && leaf && path && verifyInclusion(item.leaf_index, size, leaf, path, root) === undefined
    fail(holds ? `sealed at leaf ${String(item.leaf_index)} of the signed tree, but missing from the history (deleted from the log)`
      : `listed as sealed at leaf ${String(item.leaf_index)}, but its proof does not hold`, name)
  }
  for (const problem of completenessProblems(doc, streamId, { size, root }, shown, publicKey)) fail(problem)
  const complete = isObject(doc.completeness) && findings.length === 0 ? { streamEvents: Number(doc.completeness.stream_events) } : undefined
  return { ok: findings.length === 0, streamId, treeSize: size, verified, findings, ...(complete ? { complete } : {}) }
}
