import type { OrganizationRef } from '../../schemas/events/shipments.js'
import { type ShipmentChanges, UnsettledBatches } from './shipment-changes.js'
import type { Overrides } from './status-catalog.js'

/**
 * What POST /shipments looks up before it can decide (the counterpart, the contract, the caller's
 * status catalog), kept per process so that a creation from a known pair needs no read at all.
 * Never the only copy of anything: a miss reads the read model. Two parts, each as stale as its
 * facts allow:
 * - Counterparts: (caller, side, counterpart) → the counterpart's reference, kept only once an
 *   active contract binds the two. An organization's id, name, subdomain and roles never change
 *   after creation, and no event ends a contract, so a hit is current; `ttlMs` bounds it anyway.
 *   Refusals are not kept: a contract signed a moment ago works at once.
 * - Status catalogs: organization → its renames and recolours. These change, so they follow the
 *   view cache's rules (view-cache.ts), on the same notices: an organization named by a batch
 *   announced in-process is neither served nor filled until that batch's notice arrives; a notice
 *   from any process drops it; a read started before an invalidation does not fill.
 */
export const PARTIES_CACHE_SIZE = 10_000
export const PARTIES_CACHE_TTL_MS = 60_000
const UNSETTLED_MS = 10_000

interface Stored<T> { value: T; storedAt: number }

export class PartiesCache {
  private readonly counterparts = new Map<string, Stored<OrganizationRef>>()
  private readonly catalogs = new Map<string, Stored<Overrides>>()
  private readonly unsettled: UnsettledBatches
  private generation = 0

  constructor(private readonly opts: { ttlMs?: number; maxEntries?: number; unsettledMs?: number; now?: () => number } = {}) {
    this.unsettled = new UnsettledBatches(opts.unsettledMs ?? UNSETTLED_MS, (batch) => this.settle(batch))
  }

  private get ttlMs(): number { return this.opts.ttlMs ?? PARTIES_CACHE_TTL_MS }
  private now(): number { return this.opts.now ? this.opts.now() : Date.now() }

  /** Marks the start of a lookup that may fill the catalog part; pass the result to `setCatalog`. */
  begin(): number { return this.generation }

  counterpart(key: string): OrganizationRef | undefined {
    return this.fresh(this.counterparts, key)
  }

  setCounterpart(key: string, ref: OrganizationRef): void {
    this.store(this.counterparts, key, ref)
  }

  catalog(orgId: string): Overrides | undefined {
    return this.unsettled.hasOrganization(orgId) ? undefined : this.fresh(this.catalogs, orgId)
  }

  setCatalog(orgId: string, overrides: Overrides, generation: number): void {
    if (generation !== this.generation || this.unsettled.hasOrganization(orgId)) return
    this.store(this.catalogs, orgId, overrides)
  }

  /** In-process, before the batch commits. Batches that rename nothing change nothing here. */
  announced(c: ShipmentChanges): void {
    if (!c.all && c.organizations.length === 0) return
    if (!this.unsettled.add(c.batch, [], c.all ? [] : c.organizations)) return
    this.invalidate(c)
  }

  /** The NOTIFY of a committed batch, from any process (this one's included). */
  notified(c: ShipmentChanges): void {
    if (!c.all && c.organizations.length === 0 && !this.unsettled.has(c.batch)) return
    this.invalidate(c)
    this.settle(c.batch)
  }

  close(): void {
    this.unsettled.close()
  }

  private invalidate(c: ShipmentChanges): void {
    this.generation++
    if (c.all) { this.catalogs.clear(); return }
    for (const o of c.organizations) this.catalogs.delete(o)
  }

  private settle(batch: string): void {
    // Lookups that ran while the batch was unsettled may have read it half-way: they must not fill.
    if (this.unsettled.settle(batch)) this.generation++
  }

  private fresh<T>(map: Map<string, Stored<T>>, key: string): T | undefined {
    const e = map.get(key)
    if (!e) return undefined
    if (this.now() - e.storedAt >= this.ttlMs) { map.delete(key); return undefined }
    return e.value
  }

  private store<T>(map: Map<string, Stored<T>>, key: string, value: T): void {
    if (this.ttlMs <= 0) return
    map.delete(key)
    map.set(key, { value, storedAt: this.now() })
    // Maps iterate in insertion order: drop the oldest.
    if (map.size > (this.opts.maxEntries ?? PARTIES_CACHE_SIZE)) map.delete(map.keys().next().value!)
  }
}
