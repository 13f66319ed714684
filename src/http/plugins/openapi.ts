import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'

/**
 * The reference page's module inlines a 4 MB browser bundle, about 55 MB resident once imported:
 * it is loaded on the first visit to /docs, in a Fastify instance of its own, not at every start.
 */
function lazyReferencePage(routePrefix: `/${string}`, documentUrl: string) {
  let page: Promise<FastifyInstance> | undefined
  const load = async () => {
    const { default: apiReference } = await import('@scalar/fastify-api-reference')
    const inner = Fastify({ logger: false })
    await inner.register(apiReference, { routePrefix, configuration: { url: documentUrl } as any })
    await inner.ready()
    return inner
  }
  return {
    async serve(req: FastifyRequest, reply: FastifyReply) {
      const inner = await (page ??= load().catch((err) => { page = undefined; throw err }))
      reply.hijack()
      inner.routing(req.raw, reply.raw)
    },
    async close() { if (page) await (await page.catch(() => undefined))?.close() },
  }
}

/** `/openapi.json` generated from the route schemas (the same TypeBox schemas that validate), and `/docs`. */
export default fp(async function openapi(app: FastifyInstance) {
  await app.register(swagger, {
    openapi: {
      // 3.1: its schemas are JSON Schema 2020-12, as TypeBox writes them (numeric exclusiveMinimum, type null).
      openapi: '3.1.0',
      info: {
        title: 'Shipping platform API',
        version: '1.0.0',
        description: 'Organizational routes API (`/api/v1`), carrier integration API (`/carrier/v1`), platform admin API (`/admin/v1`) and the audit log proofs (`/audit/v1`).',
      },
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      },
      security: [{ bearer: [] }],
    },
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  const docs = lazyReferencePage('/docs', '/openapi.json')
  app.get('/docs', { schema: { hide: true } }, docs.serve)
  app.get('/docs/*', { schema: { hide: true } }, docs.serve)
  app.addHook('onClose', docs.close)
}, { name: 'openapi' })
