import type { ChangeNotice } from '../../projections/change-notices.js'
import type { ChangeSubscriber } from '../../projections/read-model-changes.js'
import type { Cache } from './cache.js'

/** The cache tags a notice touches, or 'all'. */
export type TagsOf = (n: ChangeNotice) => readonly string[] | 'all'

/**
 * A cache kept current by the projection runner's change notices:
 * - this process's round, before its commit: its tags are dropped and held (neither served nor
 *   filled), so a write answered here is seen by the next read here, whenever the NOTIFY arrives;
 * - a committed round's NOTIFY, from any process: its tags are dropped; when it is this process's
 *   own round, the hold ends (and loads that ran meanwhile are not stored).
 * Notices that touch none of the cache's tags cost it nothing.
 */
export function invalidatedBy<K, V>(cache: Cache<K, V>, tagsOf: TagsOf): ChangeSubscriber {
  const drop = (tags: readonly string[] | 'all') => {
    if (tags === 'all') cache.clear()
    else if (tags.length) cache.invalidate(tags)
  }
  return {
    changing(n) {
      const tags = tagsOf(n)
      if (tags !== 'all' && tags.length) cache.hold(tags)
      drop(tags)
    },
    changed(n, announced) {
      drop(tagsOf(n))
      const held = announced && tagsOf(announced)
      if (held && held !== 'all' && held.length) cache.release(held)
    },
  }
}
