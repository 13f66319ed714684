import { type ShipmentChanges, UnsettledBatches } from './shipment-changes.js'

/**
 * A per-process cache of `GET /shipments/{id}` answers: the serialized JSON body per (viewer
 * organization, shipment), so a hit costs no query and no serialization. Entries are filled only
 * from a read that checked visibility (the viewer is the shipper or the carrier), and the key
 * holds the viewer, so another tenant never gets one. It is never the only copy of anything.
 *
 * Kept current by invalidation (src/shipments/shipment-changes.ts), not by validating each hit:
 * - the shipments projection NOTIFYs the changed ids (and the organizations whose status catalog
 *   changed) at commit; every process drops those entries when the notice arrives;
 * - the process whose runner applies a batch is told before the commit: its ids are "unsettled"
 *   (no hit, no fill) until that batch's own notice arrives (or `unsettledMs` passes), so a write
 *   answered by this process is seen by its next GET here whatever the NOTIFY's timing;
 * - entries expire after `ttlMs` anyway, in case a notice is lost (the LISTEN connection dropped);
 * - a read that started before an invalidation does not fill (generation check), so a slow read
 *   cannot put back a view an invalidation has just removed.
 * Across processes a write is therefore seen once its NOTIFY arrives (milliseconds), at worst `ttlMs`.
 */

export const VIEW_CACHE_SIZE = 2_000
export const VIEW_CACHE_TTL_MS = 30_000
export const UNSETTLED_MS = 10_000

interface Entry { json: string; storedAt: number }

export interface ViewCacheOptions {
  /** Shipments held (each with up to two viewers: its shipper and its carrier). */
  maxShipments?: number
  ttlMs?: number
  unsettledMs?: number
  now?: () => number
}

export class ShipmentViewCache {
  /**
   * shipment id → viewer organization → entry. Map order is insertion order: the oldest fill goes
   * first when full (a hit does not reorder: that costs a measurable share of a hit, and `ttlMs`
   * refills hot entries anyway).
   */
  private readonly byShipment = new Map<number, Map<string, Entry>>()
  /** Batches announced in-process whose notice has not arrived yet, with what they change. */
  private readonly unsettled: UnsettledBatches
  private generation = 0
  private readonly max: number
  private readonly ttlMs: number
  private readonly unsettledMs: number
  private readonly now: () => number

  constructor(opts: ViewCacheOptions = {}) {
    this.max = opts.maxShipments ?? VIEW_CACHE_SIZE
    this.ttlMs = opts.ttlMs ?? VIEW_CACHE_TTL_MS
    this.unsettledMs = opts.unsettledMs ?? UNSETTLED_MS
    this.now = opts.now ?? Date.now
    this.unsettled = new UnsettledBatches(this.unsettledMs, (batch) => this.settle(batch))
  }

  get size(): number { return this.byShipment.size }

  /** Marks the start of a read that may fill; pass the result to `set`. */
  begin(): number { return this.generation }

  get(orgId: string, id: number): string | undefined {
    const viewers = this.byShipment.get(id)
    const e = viewers?.get(orgId)
    if (!e || this.unsettled.hasId(id) || this.unsettled.hasOrganization(orgId)) return undefined
    if (this.now() - e.storedAt >= this.ttlMs) {
      viewers!.delete(orgId)
      if (viewers!.size === 0) this.byShipment.delete(id)
      return undefined
    }
    return e.json
  }

  set(orgId: string, id: number, json: string, generation: number): void {
    if (this.ttlMs <= 0 || generation !== this.generation || this.unsettled.hasId(id) || this.unsettled.hasOrganization(orgId)) return
    let viewers = this.byShipment.get(id)
    if (viewers) this.byShipment.delete(id)
    else viewers = new Map()
    viewers.set(orgId, { json, storedAt: this.now() })
    this.byShipment.set(id, viewers)
    if (this.byShipment.size > this.max) this.byShipment.delete(this.byShipment.keys().next().value!)
  }

  /** In-process, before the batch commits: its views are neither served nor filled until its notice. */
  announced(c: ShipmentChanges): void {
    if (!this.unsettled.add(c.batch, c.ids, c.organizations)) return
    this.invalidate(c)
  }

  /** The NOTIFY of a committed batch, from any process (this one's included). */
  notified(c: ShipmentChanges): void {
    this.invalidate(c)
    this.settle(c.batch)
  }

  clear(): void {
    this.generation++
    this.byShipment.clear()
  }

  private invalidate(c: ShipmentChanges): void {
    if (c.all) return this.clear()
    this.generation++
    for (const id of c.ids) this.drop(id)
    if (c.organizations.length === 0) return
    const orgs = new Set(c.organizations)
    for (const [id, viewers] of this.byShipment) {
      for (const o of viewers.keys()) if (orgs.has(o)) viewers.delete(o)
      if (viewers.size === 0) this.byShipment.delete(id)
    }
  }

  private settle(batch: string): void {
    // Reads that ran while the batch was unsettled may have read it half-way: they must not fill.
    if (this.unsettled.settle(batch)) this.generation++
  }

  private drop(id: number): void {
    this.byShipment.delete(id)
  }

  /** Stops the timers of unsettled batches (process shutdown). */
  close(): void {
    this.unsettled.close()
  }
}
