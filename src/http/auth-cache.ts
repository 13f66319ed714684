/**
 * A short-lived, per-process cache of organization tokens (keyed by token hash) → the token's
 * organization, so an authenticated read needs no database round trip (issue 2 §7: the HTTP
 * benchmark). It is never the only copy of anything (DESIGN §5): a miss reads the read model.
 *
 * Staleness is bounded three ways:
 * - the organizations projection NOTIFYs `AUTH_CHANGED_CHANNEL` with the organization id when a
 *   token or an organization row changes; every process drops that organization's entries;
 * - a write request answered by this process drops the entries it may have changed before its
 *   response leaves (read-your-writes does not depend on NOTIFY delivery order);
 * - entries expire after `ttlMs` anyway, in case a notification is lost while reconnecting.
 * A load that started before an invalidation is not stored (generation check), so a slow read
 * cannot put a row back that an invalidation has just removed.
 */
export const AUTH_CHANGED_CHANNEL = 'auth_changed'

export interface CachedToken<Org> {
  tokenId: string
  expiresAt: Date | null
  organization: Org
}

interface Entry<Org> extends CachedToken<Org> { organizationId: string; storedAt: number }

export class AuthCache<Org> {
  private readonly entries = new Map<string, Entry<Org>>()
  /** Token hashes per organization: every write request drops its organization's entries. */
  private readonly byOrganization = new Map<string, Set<string>>()
  private generation = 0

  constructor(private readonly opts: { ttlMs: number; maxEntries: number; now?: () => number }) {}

  private now(): number { return this.opts.now ? this.opts.now() : Date.now() }

  get size(): number { return this.entries.size }

  /** Marks the start of a load; pass the result to `set`. */
  begin(): number { return this.generation }

  get(tokenHash: string): CachedToken<Org> | undefined {
    const e = this.entries.get(tokenHash)
    if (!e) return undefined
    if (this.now() - e.storedAt >= this.opts.ttlMs) {
      this.delete(tokenHash)
      return undefined
    }
    return e
  }

  set(tokenHash: string, organizationId: string, value: CachedToken<Org>, generation: number): void {
    if (this.opts.ttlMs <= 0 || generation !== this.generation) return
    if (this.entries.size >= this.opts.maxEntries) {
      // Maps iterate in insertion order: drop the oldest.
      const oldest = this.entries.keys().next()
      if (!oldest.done) this.delete(oldest.value)
    }
    this.delete(tokenHash)
    this.entries.set(tokenHash, { ...value, organizationId, storedAt: this.now() })
    let hashes = this.byOrganization.get(organizationId)
    if (!hashes) this.byOrganization.set(organizationId, (hashes = new Set()))
    hashes.add(tokenHash)
  }

  dropOrganization(organizationId: string): void {
    this.generation++
    for (const h of this.byOrganization.get(organizationId) ?? []) this.entries.delete(h)
    this.byOrganization.delete(organizationId)
  }

  clear(): void {
    this.generation++
    this.entries.clear()
    this.byOrganization.clear()
  }

  private delete(tokenHash: string): void {
    const e = this.entries.get(tokenHash)
    if (!e) return
    this.entries.delete(tokenHash)
    const hashes = this.byOrganization.get(e.organizationId)
    hashes?.delete(tokenHash)
    if (hashes?.size === 0) this.byOrganization.delete(e.organizationId)
  }
}
