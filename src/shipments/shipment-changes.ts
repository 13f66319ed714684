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

/**
 * Batches announced in-process whose NOTIFY has not arrived yet, with the shipment ids and
 * organizations they change, counted (two unsettled batches may name one id). The caches keep
 * those entries out of service until the batch settles: by its notice, or after `ms` in case the
 * notice is lost, when `expired` is called so the owner can settle it the same way.
 */
export class UnsettledBatches {
  private readonly batches = new Map<string, { ids: number[]; organizations: string[]; timer: NodeJS.Timeout }>()
  private readonly ids = new Map<number, number>()
  private readonly organizations = new Map<string, number>()

  constructor(private readonly ms: number, private readonly expired: (batch: string) => void) {}

  /** False when the batch is already unsettled. */
  add(batch: string, ids: number[], organizations: string[]): boolean {
    if (this.batches.has(batch)) return false
    const timer = setTimeout(() => this.expired(batch), this.ms)
    timer.unref()
    this.batches.set(batch, { ids, organizations, timer })
    for (const id of ids) this.ids.set(id, (this.ids.get(id) ?? 0) + 1)
    for (const o of organizations) this.organizations.set(o, (this.organizations.get(o) ?? 0) + 1)
    return true
  }

  has(batch: string): boolean { return this.batches.has(batch) }
  hasId(id: number): boolean { return this.ids.has(id) }
  hasOrganization(organization: string): boolean { return this.organizations.has(organization) }

  /** True when the batch was unsettled. */
  settle(batch: string): boolean {
    const p = this.batches.get(batch)
    if (!p) return false
    clearTimeout(p.timer)
    this.batches.delete(batch)
    for (const id of p.ids) release(this.ids, id)
    for (const o of p.organizations) release(this.organizations, o)
    return true
  }

  close(): void {
    for (const p of this.batches.values()) clearTimeout(p.timer)
    this.batches.clear()
    this.ids.clear()
    this.organizations.clear()
  }
}

function release<K>(counts: Map<K, number>, key: K): void {
  const n = (counts.get(key) ?? 1) - 1
  if (n <= 0) counts.delete(key)
  else counts.set(key, n)
}

/** What a per-process cache does with the projection's notices. */
export interface ShipmentChangesFollower {
  announced(c: ShipmentChanges): void
  notified(c: ShipmentChanges): void
  close(): void
}

/**
 * Feeds a cache both ways it hears of changes (announced in-process, NOTIFY from any process);
 * the returned function stops that and closes the cache.
 */
export async function followShipmentChanges(
  listen: (channel: string, cb: (payload: string) => void) => Promise<() => Promise<void>>,
  follower: ShipmentChangesFollower,
): Promise<() => Promise<void>> {
  const stopObserving = observeShipmentChanges((c) => follower.announced(c))
  const unlisten = await listen(SHIPMENTS_CHANGED_CHANNEL, (payload) => follower.notified(decodeShipmentChanges(payload)))
  return async () => {
    stopObserving()
    follower.close()
    await unlisten()
  }
}
