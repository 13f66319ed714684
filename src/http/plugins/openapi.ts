import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import { lazyReferencePage, referenceConfiguration } from './api-reference.js'
import compress from './compress.js'
import { finishDocument } from '../openapi/document.js'
import { publicOrigin } from '../public-url.js'

const TITLE = 'Shipping platform API'

export interface OpenapiOptions {
  /** `PUBLIC_BASE_URL`: the document's server; without it, the origin the request for the document came to. */
  publicBaseUrl?: string | undefined
}

/**
 * `/openapi.json` generated from the route schemas (the same TypeBox schemas that validate),
 * finished by `src/http/openapi/` (names, operation ids, security, responses), and `/docs`.
 */
export default fp<OpenapiOptions>(async function openapi(app: FastifyInstance, opts) {
  await app.register(swagger, {
    openapi: {
      // 3.1: its schemas are JSON Schema 2020-12, as TypeBox writes them (numeric exclusiveMinimum, type null).
      openapi: '3.1.0',
      info: {
        title: TITLE,
        version: '1.0.0',
        description: 'Organizational routes API (`/api/v1`), carrier integration API (`/carrier/v1`), platform admin API (`/admin/v1`) and the audit log proofs (`/audit/v1`).',
        license: { name: 'MIT', identifier: 'MIT' },
      },
    },
    transformObject: (generated) => ('openapiObject' in generated ? finishDocument(generated.openapiObject) : generated.swaggerObject),
  })
  const serverOf = (req: FastifyRequest) => opts.publicBaseUrl ?? publicOrigin(req)
  app.get('/openapi.json', { schema: { hide: true } }, async (req) => {
    const doc = app.swagger()
    // Registered with `openapi` options above: never a Swagger 2 document, which has no `openapi`.
    if (!('openapi' in doc)) throw new Error('@fastify/swagger generated a Swagger 2 document')
    const { openapi: version, info, ...rest } = doc
    return { openapi: version, info, servers: [{ url: serverOf(req) }], ...rest }
  })
  const docs = lazyReferencePage('/docs', referenceConfiguration(TITLE, '/openapi.json'), async (inner) => { await inner.register(compress) })
  app.get('/docs', { schema: { hide: true } }, docs.serve)
  app.get('/docs/*', { schema: { hide: true } }, docs.serve)
  app.addHook('onClose', docs.close)
}, { name: 'openapi' })
