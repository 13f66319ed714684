import type { FastifyInstance } from 'fastify'
import type { BackgroundFigures, Platform } from '../../platform.js'
import { busFigures, busReadiness } from '../bus-figures.js'
import { messageOf } from '../../shared/thrown.js'
import type { Reading } from '../../shared/sampled.js'
import type { ClusterGauge } from '../../infrastructure/metrics/metrics.js'
import { settlesWithin } from '../../shared/wakeup.js'
import { ageMs, failedStatus, HEALTH_WAIT_MS, HealthMonitor, READY_FIGURES_WAIT_MS } from '../health-monitor.js'

export interface ReadinessCheck {
  name: string
  check(): Promise<Record<string, unknown>>
  /** Its figures as gauges for `/metrics` (read there too, cut at HEALTH_WAIT_MS). */
  gauges?(): Promise<ClusterGauge[]>
}

type CheckStatus = 'ok' | 'degraded' | 'error'
type Check = { status: CheckStatus } & Record<string, unknown>

/**
 * A probe's reading as a check: its figures and age, or why there are none and how old the last
 * good one is, `degraded` while that is only slowness and `error` once the dependency is down
 * (failedStatus).
 */
function checkOf<T>(r: Reading<T>, figures: (v: T) => object, kind: { figures: boolean }): Check {
  if (r.ok) return { status: 'ok', ...figures(r.value), age_ms: ageMs(r) }
  const last = r.lastOk ? { ...figures(r.lastOk.value), last_ok_age_ms: Math.round(Date.now() - r.lastOk.at) } : {}
  return { status: failedStatus(r, kind), ...last, message: r.error, age_ms: ageMs(r) }
}

/**
 * The bus check: `degraded` (not an error: requests are served and the relay catches up once the
 * bus is back) while the bus does not answer or this process's publishes fail; its lag figures as
 * last read.
 */
function busCheck(ping: Reading<void>, metrics: Reading<BackgroundFigures>, publishing: ReturnType<NonNullable<Platform['background']>['bus']['publishHealth']>, relayHere: boolean): Check {
  const figures = metrics.ok ? metrics.value : metrics.lastOk?.value
  const r = figures ? busReadiness(figures) : undefined
  const problems: string[] = []
  if (!ping.ok) problems.push(ping.error)
  else if (metrics.ok && r && !r.ok) problems.push(r.error ?? 'the bus did not answer')
  if (!metrics.ok) problems.push(`figures not read: ${metrics.error}`)
  if (publishing.failingSince) problems.push(`publishes failing since ${publishing.failingSince.toISOString()}: ${publishing.error}`)
  return {
    status: problems.length ? 'degraded' : 'ok',
    ...r,
    relay_here: relayHere,
    publishing: {
      failing_since: publishing.failingSince?.toISOString() ?? null,
      last_success_at: publishing.lastSuccessAt?.toISOString() ?? null,
      ...(publishing.error ? { error: publishing.error } : {}),
    },
    age_ms: ageMs(ping),
    figures_age_ms: ageMs(metrics),
    ...(problems.length ? { message: problems.join('; ') } : {}),
  }
}

/** The modules' gauges, each cut at HEALTH_WAIT_MS (one that does not answer is left out). */
async function moduleGauges(checks: ReadinessCheck[]): Promise<ClusterGauge[]> {
  const out: ClusterGauge[] = []
  await Promise.all(checks.map(async (c) => {
    if (!c.gauges) return
    await settlesWithin(c.gauges().then((g) => { out.push(...g) }, () => undefined), HEALTH_WAIT_MS)
  }))
  return out
}

/** A module's own check, cut at HEALTH_WAIT_MS like the rest. */
async function boundedCheck(c: ReadinessCheck): Promise<Check> {
  const started = Date.now()
  let result: Check = { status: 'error', message: `no answer within ${HEALTH_WAIT_MS} ms` }
  const run = c.check().then((r) => { result = { status: 'ok', ...r } }, (err) => { result = { status: 'error', message: messageOf(err) } })
  await settlesWithin(run, HEALTH_WAIT_MS)
  return { ...result, age_ms: 0, took_ms: Date.now() - started }
}

/**
 * `/health`: the process is up. `/ready`: its dependencies, with lag figures (DESIGN §3.1): 200
 * `ready`; 200 `degraded` when a check is (the bus, or a dependency slow to answer); 503
 * `not_ready` when a check is an `error` (the database, the event store or the projections down). Both it and `/metrics` answer from the
 * state the HealthMonitor keeps, within a second whatever is down.
 */
export async function healthRoutes(app: FastifyInstance, { platform, checks }: { platform: Platform; checks: ReadinessCheck[] }) {
  const monitor = new HealthMonitor(platform)
  monitor.start()
  app.addHook('onClose', async () => monitor.stop())

  app.get('/health', { schema: { hide: true } }, async () => ({ status: 'ok' }))

  app.get('/ready', { schema: { hide: true } }, async (_req, reply) => {
    const background = platform.background
    const bus = monitor.busProbes()
    const [database, eventStore, projections, busPing, busMetrics, own] = await Promise.all([
      monitor.database.read(HEALTH_WAIT_MS), monitor.eventStore.read(READY_FIGURES_WAIT_MS), monitor.projections.read(READY_FIGURES_WAIT_MS),
      bus?.ping.read(HEALTH_WAIT_MS), bus?.metrics.read(READY_FIGURES_WAIT_MS), Promise.all(checks.map(boundedCheck)),
    ])
    const detail: Record<string, Check> = {
      database: checkOf(database, (v) => v, { figures: false }),
      event_store: checkOf(eventStore, (v) => v, { figures: true }),
      projections: checkOf(projections, (v) => ({ projections: v }), { figures: true }),
    }
    if (background && busPing && busMetrics) detail['bus'] = busCheck(busPing, busMetrics, background.bus.publishHealth(), background.relay.isActive)
    checks.forEach((c, i) => { detail[c.name] = own[i]! })
    const statuses = Object.values(detail).map((d) => d.status)
    const status = statuses.includes('error') ? 'not_ready' : statuses.includes('degraded') ? 'degraded' : 'ready'
    return reply.code(status === 'not_ready' ? 503 : 200).send({ status, checks: detail })
  })

  /**
   * Prometheus text (prom-client): this process's request and append histograms, webhook outcomes
   * and process figures, plus the cluster's projection, relay and consumer figures as last read
   * (read now unless that takes longer than HEALTH_WAIT_MS; `bus_up` 0 when the bus did not answer).
   */
  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    const bus = monitor.busProbes()
    const [projections, busMetrics, busPing, gauges] = await Promise.all([
      monitor.projections.read(HEALTH_WAIT_MS), bus?.metrics.read(HEALTH_WAIT_MS), bus?.ping.read(HEALTH_WAIT_MS), moduleGauges(checks),
    ])
    const statuses = projections.ok ? projections.value : projections.lastOk?.value ?? []
    const figures = statuses.map((p) => ({ name: p.name, lag: p.lag, parked: platform.projections.parkedCount.get(p.name) ?? 0 }))
    const latest = busMetrics && (busMetrics.ok ? busMetrics.value : busMetrics.lastOk?.value)
    // `bus_up` from the background probe as well: the figures may be a few seconds old.
    const last = latest && (busMetrics!.ok && busPing?.ok ? latest : { ...latest, bus: { ...latest.bus, reachable: false } })
    const { contentType, text } = await platform.metrics.exposition({ projections: figures, bus: last ? busFigures(last) : undefined, gauges })
    return reply.type(contentType).send(text)
  })
}
