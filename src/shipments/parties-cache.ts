import type { OrganizationRef } from '../../schemas/events/shipments.js'
import { changedKeys } from '../../projections/change-notices.js'
import { STATUS_CATALOGS } from '../../projections/shipments/shipments-projection.js'
import type { ChangeSubscriber } from '../../projections/read-model-changes.js'
import { Cache } from '../shared/cache.js'
import { invalidatedBy } from '../shared/cache-invalidation.js'
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
 *   shipments projection's notices of changed catalogs (`subscriber`, see cache-invalidation.ts).
 */
export const PARTIES_CACHE_SIZE = 10_000
export const PARTIES_CACHE_TTL_MS = 60_000

export class PartiesCache {
  private readonly counterparts: Cache<string, OrganizationRef>
  private readonly catalogs: Cache<string, Overrides>
  /** Subscribe it to the platform's ReadModelChanges. */
  readonly subscriber: ChangeSubscriber

  constructor(opts: { ttlMs?: number; maxEntries?: number; now?: () => number } = {}) {
    const options = {
      ttlMs: opts.ttlMs ?? PARTIES_CACHE_TTL_MS,
      maxEntries: opts.maxEntries ?? PARTIES_CACHE_SIZE,
      ...(opts.now ? { now: opts.now } : {}),
    }
    this.counterparts = new Cache(options)
    this.catalogs = new Cache({ ...options, tagsOf: (orgId) => [orgId] })
    this.subscriber = invalidatedBy(this.catalogs, (n) => {
      const orgs = changedKeys(n, STATUS_CATALOGS)
      return orgs === 'all' ? 'all' : orgs.map(String)
    })
  }

  /** Marks the start of a lookup that may fill the catalog part; pass the result to `setCatalog`. */
  begin(): number { return this.catalogs.begin() }

  counterpart(key: string): OrganizationRef | undefined {
    return this.counterparts.get(key)
  }

  /** Never invalidated (see above), so no generation to check. */
  setCounterpart(key: string, ref: OrganizationRef): void {
    this.counterparts.set(key, ref, this.counterparts.begin())
  }

  catalog(orgId: string): Overrides | undefined {
    return this.catalogs.get(orgId)
  }

  setCatalog(orgId: string, overrides: Overrides, generation: number): void {
    this.catalogs.set(orgId, overrides, generation)
  }
}
