import type { FastifyInstance } from 'fastify'
import { ping } from '../../infrastructure/database/connection.js'
import type { Platform } from '../../platform.js'
import { busReadiness, renderPrometheus } from '../../processes/metrics.js'

export interface ReadinessCheck {
  name: string
  check(): Promise<Record<string, unknown>>
}

/** `/health`: the process is up. `/ready`: its dependencies answer, with lag figures (DESIGN §3.1). */
export async function healthRoutes(app: FastifyInstance, { platform, checks }: { platform: Platform; checks: ReadinessCheck[] }) {
  app.get('/health', { schema: { hide: true } }, async () => ({ status: 'ok' }))

  app.get('/ready', { schema: { hide: true } }, async (_req, reply) => {
    const detail: Record<string, unknown> = {}
    let ok = true
    const run = async (name: string, fn: () => Promise<unknown>) => {
      try { detail[name] = { status: 'ok', ...(await fn() as object) } } catch (err) {
        ok = false
        detail[name] = { status: 'error', message: (err as Error).message }
      }
    }
    await run('database', async () => { await ping(platform.db); return { kind: platform.database.kind } })
    await run('event_store', async () => ({ head: await platform.store.headPosition() }))
    await run('projections', async () => ({ projections: await platform.projections.status() }))
    const background = platform.background
    if (background) {
      await run('bus', async () => {
        const r = busReadiness(await background.metrics())
        if (!r.ok) throw new Error(r.error ?? 'the bus did not answer')
        return r
      })
    }
    for (const c of checks) await run(c.name, c.check)
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not_ready', checks: detail })
  })

  /** Prometheus text: projection lag and parked events, and (when the bus runs here) relay and consumer figures. */
  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    const projections = await platform.projections.status()
    const lines = [
      '# HELP projection_lag_events Events in the log after the projection\'s checkpoint (empty when unknown).',
      '# TYPE projection_lag_events gauge',
      ...projections.filter((p) => p.lag !== null).map((p) => `projection_lag_events{projection="${p.name}"} ${p.lag}`),
      '# HELP projection_parked_events_total Events a projection could not apply and parked, since this process started.',
      '# TYPE projection_parked_events_total counter',
      ...projections.map((p) => `projection_parked_events_total{projection="${p.name}"} ${platform.projections.parkedCount.get(p.name) ?? 0}`),
    ]
    const background = platform.background
    const bus = background ? renderPrometheus(await background.metrics()) : ''
    return reply.type('text/plain; version=0.0.4; charset=utf-8').send(`${lines.join('\n')}\n${bus}${bus.endsWith('\n') || !bus ? '' : '\n'}`)
  })
}
