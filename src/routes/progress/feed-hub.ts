import type { Kysely } from 'kysely'
import { changedKeys } from '../../../projections/change-notices.js'
import type { ChangeSubscriber } from '../../../projections/read-model-changes.js'
import type { ReadModelDatabase } from '../../../projections/read-model-database.js'
import { ROUTE_FEED } from '../../../projections/route-feed/route-feed-projection.js'
import { ROUTE_ETAS } from '../../etas/eta-tables.js'
import { OpenStreams } from '../../http/open-streams.js'
import { etaFramesAfter, framesAfter, streamIdOf, type FeedCursor, type FeedFrame } from './feed-queries.js'

const PAGE = 1000
const RETRY_MS = 1000

interface Watcher {
  /** The newest frame of each kind this watcher has (from its start or from the hub). */
  cursor: FeedCursor
  /** False while its start (snapshot or backlog) is loading: frames wait in `pending`. */
  ready: boolean
  pending: FeedFrame[]
  sink: (frames: FeedFrame[]) => void
}

interface RouteWatch {
  watchers: Set<Watcher>
  /** The newest frame of each kind the hub read for this route; undefined until the first watcher has started. */
  cursor: FeedCursor | undefined
  fetching: boolean
  /** Kinds told of while a read ran (or before the first watcher started): read again after it. */
  again: Set<FrameKind>
}

type FrameKind = 'feed' | 'eta'
const KINDS: readonly FrameKind[] = ['feed', 'eta']

/**
 * One per process: the live progress streams of every route watched here. A change notice for a
 * route (from this process's runner or any other's, through the NOTIFY) costs one query for all of
 * that route's watchers, however many; a notice arriving while that query runs makes one more after
 * it. A watcher joins before it loads its start (snapshot or the rows after its Last-Event-ID), and
 * frames the hub reads meanwhile wait for it, so nothing falls between the two; every frame goes to
 * a watcher only if it is newer than what the watcher has, so nothing comes twice. Two feeds make a
 * route's stream: the route-feed projection's frames and the ETA engine's `task.eta` frames
 * (src/etas), each with its own sequence; a watcher's place is the pair (`streamIdOf`).
 */
export class FeedHub {
  private readonly routes = new Map<number, RouteWatch>()
  private readonly open = new OpenStreams()

  constructor(private readonly rm: Kysely<ReadModelDatabase>, private readonly onError: (err: unknown) => void = () => undefined) {}

  readonly subscriber: ChangeSubscriber = {
    changing: () => undefined,
    changed: (n) => {
      for (const [topic, kind] of [[ROUTE_FEED, 'feed'], [ROUTE_ETAS, 'eta']] as const) {
        const keys = changedKeys(n, topic)
        if (keys === 'all') for (const id of this.routes.keys()) this.wake(id, kind)
        else for (const k of keys) this.wake(Number(k), kind)
      }
    },
  }

  /** Routes watched and watchers, for the benchmark and tests. */
  get size(): { routes: number; watchers: number } {
    let watchers = 0
    for (const w of this.routes.values()) watchers += w.watchers.size
    return { routes: this.routes.size, watchers }
  }

  /**
   * Watches a route: `start` sends the watcher's beginning itself and returns the newest frames it
   * covered (a number: the route feed's, with every `task.eta` frame still to come); afterwards `sink`
   * gets every newer frame, in order, each with the stream id that resumes after it. Returns the unwatch function.
   */
  async watch(routeId: number, sink: (frames: FeedFrame[]) => void, start: () => Promise<number | FeedCursor>): Promise<() => void> {
    let route = this.routes.get(routeId)
    if (!route) this.routes.set(routeId, (route = { watchers: new Set(), cursor: undefined, fetching: false, again: new Set() }))
    const w: Watcher = { cursor: { feed: 0, eta: 0 }, ready: false, pending: [], sink }
    const r = route
    r.watchers.add(w)
    const unwatch = () => {
      r.watchers.delete(w)
      if (r.watchers.size === 0 && this.routes.get(routeId) === r) this.routes.delete(routeId)
    }
    try {
      const c = await start()
      w.cursor = typeof c === 'number' ? { feed: c, eta: 0 } : { ...c }
    } catch (err) {
      unwatch()
      throw err
    }
    w.ready = true
    const waiting = w.pending
    w.pending = []
    if (waiting.length) this.send(w, waiting)
    if (r.cursor === undefined) {
      r.cursor = { ...w.cursor }
      for (const kind of [...r.again]) this.wake(routeId, kind)
    }
    return unwatch
  }

  /** Keeps an open stream's closer, so `endAll` can end it (shutdown). */
  track(close: () => void): () => void { return this.open.track(close) }

  /** Ends every open stream: the server is closing (clients reconnect with their Last-Event-ID). */
  endAll(): void { this.open.endAll() }

  private wake(routeId: number, kind: FrameKind = 'feed'): void {
    const r = this.routes.get(routeId)
    if (!r) return
    r.again.add(kind)
    if (r.cursor === undefined || r.fetching) return
    r.fetching = true
    void this.fetch(routeId, r)
  }

  private async fetch(routeId: number, r: RouteWatch): Promise<void> {
    try {
      while (r.again.size > 0 && r.watchers.size > 0) {
        // Only the kinds told of: a notice of the route feed costs one query, as before the ETAs.
        const kinds = KINDS.filter((k) => r.again.has(k))
        r.again.clear()
        for (const kind of kinds) {
          for (;;) {
            const frames = kind === 'feed'
              ? await framesAfter(this.rm, routeId, r.cursor!.feed, PAGE)
              : await etaFramesAfter(this.rm, routeId, r.cursor!.eta, PAGE)
            if (frames.length) {
              r.cursor![kind] = frames[frames.length - 1]!.id
              for (const w of r.watchers) {
                if (!w.ready) w.pending.push(...frames)
                else this.send(w, frames)
              }
            }
            if (frames.length < PAGE || r.watchers.size === 0) break
          }
        }
      }
      r.fetching = false
    } catch (err) {
      r.fetching = false
      this.onError(err)
      // The rows are still there: read them again shortly (the watchers lose nothing, only wait).
      this.open.later(RETRY_MS, () => { this.wake(routeId, 'feed'); this.wake(routeId, 'eta') })
    }
  }

  /** The frames newer than what the watcher has, each stamped with the stream id that resumes after it. */
  private send(w: Watcher, frames: FeedFrame[]): void {
    const out: FeedFrame[] = []
    for (const f of frames) {
      const kind = f.kind ?? 'feed'
      if (f.id <= w.cursor[kind]) continue
      w.cursor[kind] = f.id
      out.push({ ...f, streamId: streamIdOf(w.cursor) })
    }
    if (!out.length) return
    try { w.sink(out) } catch (err) { this.onError(err) }
  }
}
