import { changedKeys } from '../../projections/change-notices.js'
import { ORGANIZATION_ACCESS } from '../../projections/organizations/organizations-projection.js'
import type { ChangeSubscriber } from '../../projections/read-model-changes.js'
import { Cache } from '../shared/cache.js'
import { invalidatedBy } from '../shared/cache-invalidation.js'

/**
 * A short-lived, per-process cache of organization tokens (keyed by token hash) → the token's
 * organization, so an authenticated read needs no database round trip (issue 2 §7: the HTTP
 * benchmark). It is never the only copy of anything (DESIGN §5): a miss reads the read model.
 *
 * Kept current by the organizations projection's change notices (`subscriber`): an organization
 * whose row or tokens changed loses its entries in every process when the round's NOTIFY arrives,
 * and in the process whose runner applied the round already before its commit, held until that
 * NOTIFY, so a write answered here (an admin's suspension, an organization's new operational
 * address) is seen by the next request here. Entries expire after `ttlMs` anyway.
 */
export interface CachedToken<Org, User = never> {
  tokenId: string
  expiresAt: Date | null
  organization: Org
  /** The user behind a user's token (a dispatcher or a driver); null for the organization's own. */
  user?: User | null
}

type Entry<Org, User> = CachedToken<Org, User> & { organizationId: string }

export class AuthCache<Org, User = never> {
  private readonly cache: Cache<string, Entry<Org, User>>
  readonly subscriber: ChangeSubscriber

  constructor(opts: { ttlMs: number; maxEntries: number; now?: () => number }) {
    this.cache = new Cache({ ...opts, tagsOf: (_hash, e) => [e.organizationId] })
    this.subscriber = invalidatedBy(this.cache, (n) => {
      const orgs = changedKeys(n, ORGANIZATION_ACCESS)
      return orgs === 'all' ? 'all' : orgs.map(String)
    })
  }

  get size(): number { return this.cache.size }

  /** Marks the start of a load; pass the result to `set`. */
  begin(): number { return this.cache.begin() }

  get(tokenHash: string): CachedToken<Org, User> | undefined {
    return this.cache.get(tokenHash)
  }

  set(tokenHash: string, organizationId: string, value: CachedToken<Org, User>, generation: number): void {
    this.cache.set(tokenHash, { ...value, organizationId }, generation)
  }

  /** The cached token, or `load`'s (concurrent misses of one token share one load). */
  getOrLoad(tokenHash: string, load: () => Promise<Entry<Org, User> | undefined>): Promise<CachedToken<Org, User> | undefined> {
    return this.cache.getOrLoad(tokenHash, load)
  }

  dropOrganization(organizationId: string): void {
    this.cache.invalidate([organizationId])
  }

  clear(): void {
    this.cache.clear()
  }
}
