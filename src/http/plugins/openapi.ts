import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import { lazyReferencePage, referenceConfiguration } from './api-reference.js'
import compress from './compress.js'

const TITLE = 'Shipping platform API'

/** `/openapi.json` generated from the route schemas (the same TypeBox schemas that validate), and `/docs`. */
export default fp(async function openapi(app: FastifyInstance) {
  await app.register(swagger, {
    openapi: {
      // 3.1: its schemas are JSON Schema 2020-12, as TypeBox writes them (numeric exclusiveMinimum, type null).
      openapi: '3.1.0',
      info: {
        title: TITLE,
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
  const docs = lazyReferencePage('/docs', referenceConfiguration(TITLE, '/openapi.json'), async (inner) => { await inner.register(compress) })
  app.get('/docs', { schema: { hide: true } }, docs.serve)
  app.get('/docs/*', { schema: { hide: true } }, docs.serve)
  app.addHook('onClose', docs.close)
}, { name: 'openapi' })
