import type { FastifyInstance } from 'fastify'
import { ping } from '../../infrastructure/database/connection.js'
import type { Platform } from '../../platform.js'
import { busFigures, busReadiness } from '../../processes/metrics.js'
import { messageOf } from '../../shared/thrown.js'

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
    const run = async (name: string, fn: () => Promise<object>) => {
      try { detail[name] = { status: 'ok', ...(await fn()) } } catch (err) {
        ok = false
        detail[name] = { status: 'error', message: messageOf(err) }
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
        return { ...r, relay_here: background.relay.isActive }
      })
    }
    for (const c of checks) await run(c.name, c.check)
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not_ready', checks: detail })
  })

  /**
   * Prometheus text (prom-client): this process's request and append histograms, webhook outcomes
   * and process figures, plus the cluster's projection, relay and consumer figures read now.
   */
  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    const projections = (await platform.projections.status())
      .map((p) => ({ name: p.name, lag: p.lag, parked: platform.projections.parkedCount.get(p.name) ?? 0 }))
    const bus = platform.background ? busFigures(await platform.background.metrics()) : undefined
    const { contentType, text } = await platform.metrics.exposition({ projections, bus })
    return reply.type(contentType).send(text)
  })
}
