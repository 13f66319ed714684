import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Platform } from '../../platform.js'

/**
 * Times every response into the platform's metrics by route pattern (`/api/v1/tasks/:ulid`, never
 * the concrete path, so the series stay few); requests that matched no route count as `unmatched`.
 */
export default fp(async function metrics(app: FastifyInstance, { platform }: { platform: Platform }) {
  app.addHook('onResponse', (req, reply, done) => {
    platform.metrics.httpRequest(req.routeOptions.url ?? 'unmatched', req.method, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
}, { name: 'metrics' })
