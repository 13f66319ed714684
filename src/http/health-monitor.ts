import { ping } from '../infrastructure/database/connection.js'
import type { BackgroundFigures, Platform, RunningBackground } from '../platform.js'
import { type Reading, Sampled } from '../shared/sampled.js'

/**
 * How long /ready and /metrics wait for any one figure: they read several side by side and answer
 * well within a second whatever is down (a probe of a dead database or NATS node can hang for
 * seconds). A figure that takes longer is reported as last read, with its age.
 */
export const HEALTH_WAIT_MS = 600
/**
 * /ready's wait for the figures beside its checks (head, projection and bus lag): shorter, since
 * its answer is the checks' status; a figure that takes longer (the bus's consumer list on a
 * cluster takes ~0.5 s) is the one last read, with its age.
 */
export const READY_FIGURES_WAIT_MS = 250
/** The cheap probes (a `select 1`, the bus's stream) run this often in the background. */
const PROBE_INTERVAL_MS = 1000
/** A `select 1` or a stream look-up unanswered after this long: the dependency is down. */
const PING_TIMEOUT_MS = 800
/** The figures (lag counts, one query per projection) may take longer on a busy server before they count as failed. */
const FIGURES_TIMEOUT_MS = 5000
/**
 * A dependency unanswered for this long is down (/ready 503); before that a missed probe reads as
 * slow (`degraded`, 200). One `select 1` that misses its 800 ms on a machine short of CPU must not
 * take the process out of its load balancer: it takes three probes in a row.
 */
export const DOWN_AFTER_MS = 3000

/**
 * What /ready and /metrics report, kept by the process (DESIGN §3.1): the database and the bus are
 * probed in the background every second (`select 1`, the stream's info); the heavier figures (the
 * event store's head, projection, relay and consumer lag) are read when asked. Every figure comes from a `Sampled` probe, so an endpoint
 * never waits on a dependency longer than HEALTH_WAIT_MS, and says how old each figure is.
 */
export class HealthMonitor {
  readonly database: Sampled<{ kind: string }>
  readonly eventStore: Sampled<{ head: string }>
  readonly projections: Sampled<Awaited<ReturnType<Platform['projections']['status']>>>
  private bus: { of: RunningBackground; metrics: Sampled<BackgroundFigures>; ping: Sampled<void> } | undefined
  private timer: NodeJS.Timeout | undefined

  constructor(private readonly platform: Platform) {
    const figures = { timeoutMs: FIGURES_TIMEOUT_MS }
    // A connection of its own: the probe measures the database, not the request pool's queue.
    const probeDb = platform.database.dedicated('health', 2)
    this.database = new Sampled(async () => { await ping(probeDb); return { kind: platform.database.kind } }, { timeoutMs: PING_TIMEOUT_MS, freshMs: PROBE_INTERVAL_MS / 2 })
    this.eventStore = new Sampled(async () => ({ head: await platform.store.headPosition() }), figures)
    this.projections = new Sampled(() => platform.projections.status(), figures)
  }

  /**
   * The bus probes of the background running now (none without one; a new one starts afresh):
   * its figures (consumer lag: read when asked) and whether it answers (in the background).
   */
  busProbes(): { metrics: Sampled<BackgroundFigures>; ping: Sampled<void> } | undefined {
    const background = this.platform.background
    if (!background) return (this.bus = undefined)
    if (this.bus?.of !== background) {
      this.bus = {
        of: background,
        metrics: new Sampled(() => background.metrics(), { timeoutMs: FIGURES_TIMEOUT_MS }),
        ping: new Sampled(() => background.bus.ping(), { timeoutMs: PING_TIMEOUT_MS, freshMs: PROBE_INTERVAL_MS / 2 }),
      }
      void this.bus.ping.refresh()
      void this.bus.metrics.refresh()
    }
    return this.bus
  }

  /** Probes everything once now (the first /ready finds figures), then the cheap probes every second. */
  start(): void {
    for (const s of [this.database, this.eventStore, this.projections]) void s.refresh()
    this.timer ??= setInterval(() => {
      void this.database.refresh()
      void this.busProbes()?.ping.refresh()
    }, PROBE_INTERVAL_MS)
    this.timer.unref()
  }

  stop(): void {
    clearInterval(this.timer)
    this.timer = undefined
  }
}

/**
 * What a failed reading says of its dependency: `degraded` (slow) while it answered within
 * DOWN_AFTER_MS or, for figures read on demand (`figures`), when the read only took too long;
 * `error` (down) otherwise.
 */
export function failedStatus(r: Reading<unknown> & { ok: false }, opts: { figures: boolean }, now = Date.now()): 'degraded' | 'error' {
  if (opts.figures && r.timedOut) return 'degraded'
  return r.lastOk && now - r.lastOk.at < DOWN_AFTER_MS ? 'degraded' : 'error'
}

/** A reading's age in whole milliseconds (how old the state an endpoint reports is). */
export const ageMs = (r: Reading<unknown>): number => Math.max(0, Math.round(Date.now() - r.at))
