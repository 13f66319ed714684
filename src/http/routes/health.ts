import type { FastifyInstance } from 'fastify'
import { ping } from '../../infrastructure/database/connection.js'
import type { Platform } from '../../platform.js'

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
    for (const c of checks) await run(c.name, c.check)
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not_ready', checks: detail })
  })
}
