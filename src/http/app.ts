import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { randomUUID } from 'node:crypto'
import type { Platform } from '../platform.js'
import validation from './plugins/validation.js'
import errors from './plugins/errors.js'
import auth from './plugins/auth.js'
import rateLimit from './plugins/rate-limit.js'
import idempotency from './plugins/idempotency.js'
import openapi from './plugins/openapi.js'
import cors from './plugins/cors.js'
import compress from './plugins/compress.js'
import metrics from './plugins/metrics.js'
import tracing from './plugins/tracing.js'
import { healthRoutes } from './routes/health.js'
import { requireUploadsScope } from './plugins/multipart.js'
import { batchedStdout } from './log-stream.js'
import { prettyStdout, wantsPrettyLogs } from './pretty-log.js'
import { drainRefusedBody } from './refused-body.js'
import { withLogRedaction } from './log-redaction.js'
import { StreamSlots } from './stream-slots.js'
import { StreamDrain } from './stream-drain.js'
import { lazySerializers } from './lazy-serializers.js'
import type { HttpModule } from './module.js'

export interface AppOptions {
  logger?: boolean | object
  /** The business modules, in the order their routes are registered: src/modules.ts, handed in by whoever composes the app (main.ts, the tests), so that http imports none of them. */
  modules: HttpModule[]
}

/**
 * One info line per request, on completion, with method, url, status and time (Fastify's default
 * writes two: arrival and completion, a measurable share of a cached GET's CPU); the arrival line
 * is kept at debug level.
 */
class OneLinePerRequest extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (request.log.level === 'debug' || request.log.level === 'trace') request.log.debug({ req: request }, 'incoming request')
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // Flat keys: written as they are, without pino's req/res serializers.
    const line = { method: request.method, url: request.url, statusCode: reply.statusCode, responseTime: reply.elapsedTime }
    if (error) reply.log.error({ ...line, err: error }, 'request errored')
    else reply.log.info(line, 'request completed')
  }
}

/**
 * UUID-shaped request ids: a random prefix per process (74 random bits) and a counter, unique
 * across processes without drawing randomness per request (a measurable share of a cached GET).
 */
const REQUEST_ID_PREFIX = randomUUID().slice(0, 24)
let requestCounter = 0
export const nextRequestId = (): string => REQUEST_ID_PREFIX + (++requestCounter).toString(16).padStart(12, '0')

/** How long a closing server keeps its idle kept-alive sockets open (see the graceful shutdown below). */
export const IDLE_LINGER_MS = 500

/** The root plugin: cross-cutting plugins first, then each module's routes in its API area. */
export async function buildApp(platform: Platform, opts: AppOptions): Promise<FastifyInstance> {
  // The process's own logger (no logger given): readable lines at a terminal (pretty-log.ts),
  // otherwise JSON in batched writes (log-stream.ts).
  const pretty = opts.logger === undefined && wantsPrettyLogs(platform.config.logFormat, process.stdout.isTTY === true)
  const logStream = opts.logger === undefined && !pretty ? batchedStdout() : undefined
  const app = Fastify({
    // Secrets a client put in the query string never reach a log line: see log-redaction.ts.
    logger: withLogRedaction(opts.logger ?? { level: platform.config.logLevel, stream: pretty ? await prettyStdout() : logStream }),
    genReqId: (req) => {
      const given = req.headers['x-request-id']
      return typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given) ? given : nextRequestId()
    },
    requestIdHeader: false,
    // X-Forwarded-For/-Proto/-Host are believed only from the proxies TRUST_PROXY names (public-url.ts).
    trustProxy: platform.config.trustProxy.length ? platform.config.trustProxy : false,
    logController: new OneLinePerRequest(),
    bodyLimit: 1024 * 1024,
    // While closing, a request on a kept-alive socket is served (with Connection: close), not
    // answered 503: a rolling restart gives its clients no 5xx (docs/decisions.md).
    return503OnClosing: false,
    forceCloseConnections: false,
    ajv: { customOptions: { allErrors: true } },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers } },
    // Errors raised before routing (bad percent-encoding, an over-long path parameter) get the API's shape too.
    frameworkErrors: (err, _req, reply: FastifyReply) => {
      const status = err.statusCode ?? 400
      if (status >= 500) return reply.code(500).send({ message: 'Internal server error.', code: 'internal_error' })
      return reply.code(status).send(status === 414
        ? { message: 'A path parameter is too long.', code: 'uri_too_long' }
        : { message: 'The URL is not valid.', code: 'bad_url' })
    },
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.decorate('publicBaseUrl', platform.config.publicBaseUrl)
  // Every server-sent event stream of this process, whichever module opens it (sse-channel.ts).
  app.decorate('streamSlots', new StreamSlots(platform.config.sseStreamsPerAddress, platform.config.sseStreamsPerProcess))
  const streamDrain = new StreamDrain()
  app.decorate('streamDrain', streamDrain)
  // A body over the limit is read to its end (bounded) before the 413: see refused-body.ts.
  app.addHook('onError', drainRefusedBody)

  // Graceful shutdown: Fastify stops accepting and waits for in-flight requests, but a kept-alive
  // socket that served one would then hold close() up for keepAliveTimeout (72 s). So while closing,
  // every response tells the client to close, and sockets that went idle are closed: after
  // IDLE_LINGER_MS, not at once. A proxy's pooled connection closed under it just as it sends a
  // request makes a 502 it does not retry for a POST; in the linger its busy connections each carry
  // one more request, answered with Connection: close, and are retired by the proxy itself.
  let closing = false
  let sweeper: NodeJS.Timeout | undefined
  let linger: NodeJS.Timeout | undefined
  app.addHook('preClose', (done) => {
    closing = true
    // The root's preClose runs before the modules': every event stream ends here, with its retry hint.
    streamDrain.begin()
    // Node's server.close() (next, from Fastify) closes the idle sockets at once: not yet.
    const server = app.server
    const closeIdle = server.closeIdleConnections.bind(server)
    server.closeIdleConnections = () => undefined
    linger = setTimeout(() => {
      delete (server as { closeIdleConnections?: unknown }).closeIdleConnections
      closeIdle()
      // Sockets that go idle while the in-flight requests finish are closed as they do: polled here
      // rather than checked in an onResponse hook that every request would run.
      sweeper = setInterval(closeIdle, 50)
      sweeper.unref()
    }, IDLE_LINGER_MS)
    linger.unref()
    done()
  })
  app.addHook('onClose', (_instance, done) => { clearTimeout(linger); clearInterval(sweeper); done() })
  // Lines logged after this still go out, on the timer or at exit.
  if (logStream) app.addHook('onClose', (_app, done) => { logStream.flush(); done() })
  // Hooks on every request take callbacks, not promises: cheaper per call.
  app.addHook('onSend', (req, reply, payload, done) => {
    reply.header('x-request-id', req.id)
    // No response is to be read as another type than it declares (stored files are the uploader's bytes).
    reply.header('x-content-type-options', 'nosniff')
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })

  await app.register(metrics, { platform })
  await app.register(tracing)
  // Before authentication (a preflight carries no token) and before the routes (compression wraps each).
  await app.register(cors, { origins: platform.config.corsOrigins })
  await app.register(compress)
  await app.register(validation)
  await app.register(errors, { statementTimeoutMs: platform.config.requestStatementTimeoutMs })
  await app.register(openapi, { publicBaseUrl: platform.config.publicBaseUrl })
  await app.register(auth, { platform })
  await app.register(rateLimit, { platform })
  await app.register(idempotency, { platform })
  // Multipart is registered by each upload route's own plugin (plugins/multipart.ts), not here.
  app.addHook('onRoute', requireUploadsScope)

  const { modules } = opts
  await app.register(healthRoutes, { platform, checks: modules.flatMap((m) => m.readiness?.(platform) ?? []) })

  await app.register(async (area) => {
    area.addHook('onRequest', area.authenticateOrganization)
    area.addHook('onRequest', area.refuseDrivers)
    for (const m of modules) if (m.routes) await area.register(m.routes, { platform })
  }, { prefix: '/api/v1' })

  await app.register(async (area) => {
    area.addHook('onRequest', area.authenticateAdmin)
    for (const m of modules) if (m.adminRoutes) await area.register(m.adminRoutes, { platform })
  }, { prefix: '/admin/v1' })

  await app.register(async (area) => {
    area.addHook('onRequest', area.authenticateCarrier)
    for (const m of modules) if (m.carrierRoutes) await area.register(m.carrierRoutes, { platform })
  }, { prefix: '/carrier/v1' })

  for (const m of modules) if (m.publicRoutes) await app.register(m.publicRoutes, { platform })

  return app
}
