import type { Platform } from '../../platform.js'
import { FeedHub } from './feed-hub.js'

const hubs = new WeakMap<Platform, Promise<FeedHub>>()

/** The process's one hub (per platform): the API's streams and the live links' share it. */
export function hubOf(platform: Platform, log: { warn(obj: object, msg: string): void }): Promise<FeedHub> {
  let hub = hubs.get(platform)
  if (!hub) {
    hub = (async () => {
      const h = new FeedHub(platform.rm, (err) => log.warn({ err }, 'route progress: reading the feed failed'))
      await platform.changes.subscribe(h.subscriber)
      return h
    })()
    hubs.set(platform, hub)
  }
  return hub
}
