import type { Kysely } from 'kysely'
import { changedKeys } from '../../../projections/change-notices.js'
import type { ChangeSubscriber } from '../../../projections/read-model-changes.js'
import type { ReadModelDatabase } from '../../../projections/read-model-database.js'
import { ROUTE_FEED } from '../../../projections/route-feed/route-feed-projection.js'
import { framesAfter, type FeedFrame } from './feed-queries.js'

const PAGE = 1000
const RETRY_MS = 1000

interface Watcher {
  /** The newest frame this watcher has (from its start or from the hub). */
  cursor: number
  /** False while its start (snapshot or backlog) is loading: frames wait in `pending`. */
  ready: boolean
  pending: FeedFrame[]
  sink: (frames: FeedFrame[]) => void
}

interface RouteWatch {
  watchers: Set<Watcher>
  /** The newest frame the hub read for this route; undefined until the first watcher has started. */
  cursor: number | undefined
  fetching: boolean
  again: boolean
}

/**
 * One per process: the live progress streams of every route watched here. A change notice for a
 * route (from this process's runner or any other's, through the NOTIFY) costs one query for all of
 * that route's watchers, however many; a notice arriving while that query runs makes one more after
 * it. A watcher joins before it loads its start (snapshot or the rows after its Last-Event-ID), and
 * frames the hub reads meanwhile wait for it, so nothing falls between the two; every frame goes to
 * a watcher only if it is newer than what the watcher has, so nothing comes twice.
 */
export class FeedHub {
  private readonly routes = new Map<number, RouteWatch>()
  private readonly streams = new Set<() => void>()
  private readonly timers = new Set<NodeJS.Timeout>()

  constructor(private readonly rm: Kysely<ReadModelDatabase>, private readonly onError: (err: unknown) => void = () => undefined) {}

  readonly subscriber: ChangeSubscriber = {
    changing: () => undefined,
    changed: (n) => {
      const keys = changedKeys(n, ROUTE_FEED)
      if (keys === 'all') for (const id of this.routes.keys()) this.wake(id)
      else for (const k of keys) this.wake(Number(k))
    },
  }

  /** Routes watched and watchers, for the benchmark and tests. */
  get size(): { routes: number; watchers: number } {
    let watchers = 0
    for (const w of this.routes.values()) watchers += w.watchers.size
    return { routes: this.routes.size, watchers }
  }

  /**
   * Watches a route: `start` sends the watcher's beginning itself and returns the newest frame id it
   * covered; afterwards `sink` gets every newer frame, in order. Returns the unwatch function.
   */
  async watch(routeId: number, sink: (frames: FeedFrame[]) => void, start: () => Promise<number>): Promise<() => void> {
    let route = this.routes.get(routeId)
    if (!route) this.routes.set(routeId, (route = { watchers: new Set(), cursor: undefined, fetching: false, again: false }))
    const w: Watcher = { cursor: 0, ready: false, pending: [], sink }
    const r = route
    r.watchers.add(w)
    const unwatch = () => {
      r.watchers.delete(w)
      if (r.watchers.size === 0 && this.routes.get(routeId) === r) this.routes.delete(routeId)
    }
    try {
      w.cursor = await start()
    } catch (err) {
      unwatch()
      throw err
    }
    w.ready = true
    const waiting = w.pending.filter((f) => f.id > w.cursor)
    w.pending = []
    if (waiting.length) this.send(w, waiting)
    if (r.cursor === undefined) {
      r.cursor = w.cursor
      if (r.again) this.wake(routeId)
    }
    return unwatch
  }

  /** Keeps an open stream's closer, so `endAll` can end it (shutdown). */
  track(close: () => void): () => void {
    this.streams.add(close)
    return () => { this.streams.delete(close) }
  }

  /** Ends every open stream: the server is closing (clients reconnect with their Last-Event-ID). */
  endAll(): void {
    for (const close of [...this.streams]) close()
    for (const t of this.timers) clearTimeout(t)
    this.timers.clear()
  }

  private wake(routeId: number): void {
    const r = this.routes.get(routeId)
    if (!r) return
    if (r.cursor === undefined || r.fetching) {
      r.again = true
      return
    }
    r.fetching = true
    void this.fetch(routeId, r)
  }

  private async fetch(routeId: number, r: RouteWatch): Promise<void> {
    try {
      do {
        r.again = false
        for (;;) {
          const frames = await framesAfter(this.rm, routeId, r.cursor!, PAGE)
          if (frames.length) {
            r.cursor = frames[frames.length - 1]!.id
            for (const w of r.watchers) {
              if (!w.ready) w.pending.push(...frames)
              else this.send(w, frames.filter((f) => f.id > w.cursor))
            }
          }
          if (frames.length < PAGE || r.watchers.size === 0) break
        }
      } while (r.again && r.watchers.size > 0)
      r.fetching = false
    } catch (err) {
      r.fetching = false
      this.onError(err)
      // The rows are still there: read them again shortly (the watchers lose nothing, only wait).
      const t = setTimeout(() => { this.timers.delete(t); this.wake(routeId) }, RETRY_MS)
      t.unref()
      this.timers.add(t)
    }
  }

  private send(w: Watcher, frames: FeedFrame[]): void {
    if (!frames.length) return
    w.cursor = frames[frames.length - 1]!.id
    try { w.sink(frames) } catch (err) { this.onError(err) }
  }
}
