import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import apiReference from '@scalar/fastify-api-reference'

/** `/openapi.json` generated from the route schemas (the same TypeBox schemas that validate), and `/docs`. */
export default fp(async function openapi(app: FastifyInstance) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Shipping platform API',
        version: '1.0.0',
        description: 'Organizational routes API (`/api/v1`), carrier integration API (`/carrier/v1`) and platform admin API (`/admin/v1`).',
      },
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      },
      security: [{ bearer: [] }],
    },
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  await app.register(apiReference, { routePrefix: '/docs', configuration: { url: '/openapi.json' } as any })
}, { name: 'openapi' })
