import { changedKeys, type ChangeNotice } from '../../projections/change-notices.js'
import { SHIPMENT_ROWS, STATUS_CATALOGS } from '../../projections/shipments/shipments-projection.js'
import type { ChangeSubscriber } from '../../projections/read-model-changes.js'
import { Cache } from '../shared/cache.js'
import { invalidatedBy } from '../shared/cache-invalidation.js'

/**
 * A per-process cache of `GET /shipments/{id}` answers: the serialized JSON body per (viewer
 * organization, shipment), so a hit costs no query and no serialization. Entries are filled only
 * from a read that checked visibility (the viewer is the shipper or the carrier), and the key
 * holds the viewer, so another tenant never gets one. It is never the only copy of anything.
 *
 * Kept current by the shipments projection's change notices (`subscriber`, see
 * src/shared/cache-invalidation.ts), not by validating each hit: a shipment whose row changed drops
 * its views for every viewer; an organization whose status catalog changed drops every view it
 * sees. This process's own rounds hold those views (no hit, no fill) from before their commit
 * until their NOTIFY, so a write answered here is seen by the next GET here; across processes a
 * write is seen once its NOTIFY arrives (milliseconds), at worst `ttlMs`.
 */

/** (shipment, viewer) entries: up to two viewers (its shipper and its carrier) per shipment. */
export const VIEW_CACHE_SIZE = 4_000
export const VIEW_CACHE_TTL_MS = 30_000

export interface ViewCacheOptions {
  maxEntries?: number
  ttlMs?: number
  now?: () => number
}

interface View { json: string; shipment: number; viewer: string }

const shipmentTag = (id: number) => `s${id}`
const viewerTag = (orgId: string) => `o${orgId}`

/** The tags a notice touches: changed shipments, and viewers whose catalog changed. */
function tagsOf(n: ChangeNotice): readonly string[] | 'all' {
  const ids = changedKeys(n, SHIPMENT_ROWS)
  const orgs = changedKeys(n, STATUS_CATALOGS)
  if (ids === 'all' || orgs === 'all') return 'all'
  if (ids.length + orgs.length === 0) return []
  return [...ids.map((id) => shipmentTag(Number(id))), ...orgs.map((o) => viewerTag(String(o)))]
}

export class ShipmentViewCache {
  private readonly cache: Cache<string, View>
  /** Subscribe it to the platform's ReadModelChanges. */
  readonly subscriber: ChangeSubscriber

  constructor(opts: ViewCacheOptions = {}) {
    this.cache = new Cache({
      ttlMs: opts.ttlMs ?? VIEW_CACHE_TTL_MS,
      maxEntries: opts.maxEntries ?? VIEW_CACHE_SIZE,
      tagsOf: (_key, v) => [shipmentTag(v.shipment), viewerTag(v.viewer)],
      ...(opts.now ? { now: opts.now } : {}),
    })
    this.subscriber = invalidatedBy(this.cache, tagsOf)
  }

  get size(): number { return this.cache.size }

  /** Marks the start of a read that may fill; pass the result to `set`. */
  begin(): number { return this.cache.begin() }

  get(orgId: string, id: number): string | undefined {
    return this.cache.get(`${id}/${orgId}`)?.json
  }

  set(orgId: string, id: number, json: string, generation: number): void {
    this.cache.set(`${id}/${orgId}`, { json, shipment: id, viewer: orgId }, generation)
  }
}
