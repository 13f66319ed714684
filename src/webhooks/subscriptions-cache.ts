import { changedKeys } from '../../projections/change-notices.js'
import type { ChangeSubscriber } from '../../projections/read-model-changes.js'
import { WEBHOOK_SUBSCRIPTIONS } from '../../projections/webhooks/webhooks-projection.js'
import { Cache } from '../shared/cache.js'
import { invalidatedBy } from '../shared/cache-invalidation.js'

export interface Subscription { id: string; events: string[] }

/**
 * The live webhook subscriptions of each organization, kept per process for the notifier's intake,
 * which otherwise reads them for every batch of events. Dropped by the webhooks projection's notices
 * (an organization's new subscription, a deleted one by its id); a minute at most if one is lost.
 */
export class SubscriptionsCache {
  private readonly cache = new Cache<string, Subscription[]>({
    ttlMs: 60_000, maxEntries: 10_000, tagsOf: (orgId, subs) => [orgId, ...subs.map((s) => s.id)],
  })

  readonly subscriber: ChangeSubscriber = invalidatedBy(this.cache, (n) => {
    const keys = changedKeys(n, WEBHOOK_SUBSCRIPTIONS)
    return keys === 'all' ? 'all' : keys.map(String)
  })

  /** Every organization's subscriptions, from the cache or, for the ones missing, one `load`. */
  async of(orgs: string[], load: (missing: string[]) => Promise<Map<string, Subscription[]>>): Promise<Map<string, Subscription[]>> {
    const out = new Map<string, Subscription[]>()
    const missing: string[] = []
    for (const org of orgs) {
      const hit = this.cache.get(org)
      if (hit) out.set(org, hit)
      else missing.push(org)
    }
    if (missing.length === 0) return out
    const generation = this.cache.begin()
    const loaded = await load(missing)
    for (const org of missing) {
      const subs = loaded.get(org) ?? []
      this.cache.set(org, subs, generation)
      out.set(org, subs)
    }
    return out
  }
}
