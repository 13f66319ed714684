import { changedKeys, type ChangeNotice } from '../../projections/change-notices.js'
import type { ChangeSubscriber } from '../../projections/read-model-changes.js'
import { ROUTE_FEED } from '../../projections/route-feed/route-feed-projection.js'
import { ROUTES } from '../../projections/routes/routes-projection.js'
import { SHIPMENT_ROWS, STATUS_CATALOGS } from '../../projections/shipments/shipments-projection.js'
import { TASKS } from '../../projections/tasks/tasks-projection.js'
import { ROUTE_ETAS } from '../etas/eta-tables.js'
import type { Platform } from '../platform.js'
import type { PositionNotice } from '../positions/positions-table.js'
import { OpenStreams } from '../http/open-streams.js'
import type { TrackingLocale } from './locale.js'
import { isOpen, loadTrackingFacts, type TrackingFacts } from './tracking-facts.js'
import { trackingView, viewId } from './tracking-view.js'

/** One open tracking stream. */
export interface TrackingWatcher {
  locale: TrackingLocale
  /** The id of the view the client has (its Last-Event-ID, then each frame sent). */
  lastId: string | null
  send(id: string, json: string): void
  /** The link no longer opens anything (30 days after the final status): the stream ends. */
  gone(): void
}

interface Group {
  ulid: string
  facts: TrackingFacts | null | undefined
  watchers: Set<TrackingWatcher>
  fetching: boolean
  again: boolean
}

const RETRY_MS = 1000
const has = (keys: readonly (string | number)[] | 'all', key: string | number | null | undefined) =>
  keys === 'all' || (key !== null && key !== undefined && keys.some((k) => String(k) === String(key)))

/**
 * One per process: the tracking streams open here, grouped by shipment. A change notice of the
 * read models (from this process's projector or any other's, through the NOTIFY), an ETA round or a
 * driver's position that concerns a shipment costs one read of its facts for all its streams; each
 * stream gets the view again only when its view changed (the view's id is a hash of it).
 */
export class TrackingHub {
  private readonly groups = new Map<string, Group>()
  private readonly open = new OpenStreams()

  constructor(private readonly platform: Platform, private readonly onError: (err: unknown) => void = () => undefined) {}

  readonly subscriber: ChangeSubscriber = { changing: () => undefined, changed: (n) => this.noticed(n) }

  /** A `driver_positions` NOTIFY: the pages whose stop is next on that driver's route. */
  position(payload: string): void {
    let driver: string | undefined
    try { driver = (JSON.parse(payload) as PositionNotice).driver_id } catch { /* a reconnect's empty payload: everyone */ }
    for (const g of this.groups.values()) {
      if (driver === undefined || (g.facts?.driverId === driver && g.facts.delivery?.stopsBefore === 0)) this.wake(g)
    }
  }

  get size(): { shipments: number; watchers: number } {
    let watchers = 0
    for (const g of this.groups.values()) watchers += g.watchers.size
    return { shipments: this.groups.size, watchers }
  }

  /** Adds a stream; it gets the current view at once (unless it has it), then every change. Returns the unwatch function. */
  watch(ulid: string, w: TrackingWatcher): () => void {
    let g = this.groups.get(ulid)
    if (!g) this.groups.set(ulid, (g = { ulid, facts: undefined, watchers: new Set(), fetching: false, again: false }))
    const group = g
    group.watchers.add(w)
    this.wake(group)
    return () => {
      group.watchers.delete(w)
      if (group.watchers.size === 0 && this.groups.get(ulid) === group) this.groups.delete(ulid)
    }
  }

  track(close: () => void): () => void { return this.open.track(close) }

  endAll(): void { this.open.endAll() }

  private noticed(n: ChangeNotice): void {
    const shipments = changedKeys(n, SHIPMENT_ROWS)
    const catalogs = changedKeys(n, STATUS_CATALOGS)
    const tasks = changedKeys(n, TASKS)
    const routes = [changedKeys(n, ROUTES), changedKeys(n, ROUTE_FEED), changedKeys(n, ROUTE_ETAS)]
    const waiting: Group[] = []
    for (const g of this.groups.values()) {
      const f = g.facts
      if (!f) { this.wake(g); continue }
      if (has(shipments, f.shipmentId) || has(catalogs, f.carrierId) || has(tasks, f.taskUlid) || routes.some((keys) => has(keys, f.routeId))) this.wake(g)
      // No open delivery task known (none yet, or a failed one a retry may follow): a new task may be its.
      else if (f.taskStatus === null || f.taskStatus === 'failed' || f.taskStatus === 'cancelled') waiting.push(g)
    }
    if (!waiting.length || (tasks !== 'all' && !tasks.length)) return
    if (tasks === 'all') { for (const g of waiting) this.wake(g); return }
    // One query for the notice, not one per page: which shipments the changed tasks belong to.
    this.platform.rm.selectFrom('tasks').select('shipment_id').distinct().where('ulid', 'in', tasks.map(String)).where('shipment_id', 'is not', null).execute()
      .then((rows) => {
        const ids = new Set(rows.map((r) => Number(r.shipment_id)))
        for (const g of waiting) if (g.facts && ids.has(g.facts.shipmentId)) this.wake(g)
      }, (err) => { this.onError(err); for (const g of waiting) this.wake(g) })
  }

  private wake(g: Group): void {
    g.again = true
    if (g.fetching) return
    g.fetching = true
    void this.refresh(g)
  }

  private async refresh(g: Group): Promise<void> {
    try {
      while (g.again && g.watchers.size > 0) {
        g.again = false
        const facts = await loadTrackingFacts(this.platform, g.ulid)
        g.facts = facts
        if (!facts || !isOpen(facts, this.platform.clock())) {
          for (const w of [...g.watchers]) w.gone()
          continue
        }
        const rendered = new Map<TrackingLocale, { id: string; json: string }>()
        for (const w of [...g.watchers]) {
          let r = rendered.get(w.locale)
          if (!r) {
            const json = JSON.stringify(trackingView(facts, w.locale))
            rendered.set(w.locale, (r = { id: viewId(json), json }))
          }
          if (r.id === w.lastId) continue
          w.lastId = r.id
          try { w.send(r.id, r.json) } catch (err) { this.onError(err) }
        }
      }
      g.fetching = false
    } catch (err) {
      g.fetching = false
      this.onError(err)
      this.open.later(RETRY_MS, () => { if (g.watchers.size) this.wake(g) })
    }
  }
}
