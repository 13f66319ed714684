import { randomBytes } from 'node:crypto'
import { Buffer } from 'node:buffer'

/**
 * How the shipments projection tells the processes' view caches (src/shipments/view-cache.ts)
 * which shipment views a batch changed, two ways:
 * - a NOTIFY on `SHIPMENTS_CHANGED_CHANNEL` sent at the batch's commit, to every process;
 * - an in-process announcement made inside the batch's transaction, before its commit, so the
 *   process whose runner applied the batch stops serving those views before any write waiting
 *   for that batch gets its answer (NOTIFY arrives on another connection, maybe later).
 * Both carry the same batch token: the NOTIFY settles exactly the announcement of its own batch.
 */
export const SHIPMENTS_CHANGED_CHANNEL = 'shipments_changed'

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more; above this the notice says "everything". */
export const MAX_NOTICE_BYTES = 7_900

export interface ShipmentChanges {
  /** Unique per batch (per process prefix + counter). */
  batch: string
  /** Every cached view may be stale (too many ids for one notice). */
  all: boolean
  /** Shipments whose row changed. */
  ids: number[]
  /** Organizations whose status catalog changed: every view they see may show other names or colours. */
  organizations: string[]
}

const processTag = randomBytes(4).toString('hex')
let batches = 0
export const nextBatchToken = (): string => `${processTag}.${++batches}`

/** `batch|id,id,…|org,org,…`, or `batch|*` when that would not fit in one NOTIFY. */
export function encodeShipmentChanges(c: ShipmentChanges): string {
  const whole = `${c.batch}|${c.ids.join(',')}|${c.organizations.join(',')}`
  const unsafe = c.organizations.some((o) => o.includes(',') || o.includes('|'))
  return c.all || unsafe || Buffer.byteLength(whole) > MAX_NOTICE_BYTES ? `${c.batch}|*` : whole
}

/** Anything it cannot read counts as "everything changed". */
export function decodeShipmentChanges(payload: string): ShipmentChanges {
  const [batch = '', ids, orgs] = payload.split('|')
  if (ids === undefined || ids === '*' || orgs === undefined) return { batch, all: true, ids: [], organizations: [] }
  const parsed = ids ? ids.split(',').map(Number) : []
  if (parsed.some((n) => !Number.isSafeInteger(n))) return { batch, all: true, ids: [], organizations: [] }
  return { batch, all: false, ids: parsed, organizations: orgs ? orgs.split(',') : [] }
}

type Observer = (changes: ShipmentChanges) => void
const observers = new Set<Observer>()

/** Called with every batch this process's projection runners apply, before their commit. */
export function observeShipmentChanges(observer: Observer): () => void {
  observers.add(observer)
  return () => { observers.delete(observer) }
}

export function announceShipmentChanges(changes: ShipmentChanges): void {
  for (const o of observers) o(changes)
}
