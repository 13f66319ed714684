import type { FastifyRequest } from 'fastify'
import type { CommandContext } from '../shared/command-handler.js'
import type { Platform } from '../platform.js'
import { actorOf } from './plugins/auth.js'
import { requestTraceparent } from './plugins/tracing.js'

/**
 * The context a route handler passes to its commands: the platform's clock, the authenticated
 * caller as actor, the request id (which becomes the events' request and correlation id), and its
 * Idempotency-Key claim, if any.
 */
export const commandContext = (platform: Pick<Platform, 'clock'>, req: FastifyRequest): CommandContext => ({
  now: platform.clock(), actor: actorOf(req), requestId: req.id, traceparent: requestTraceparent(req),
  ...(req.idempotency ? { idempotency: { eventId: req.idempotency.eventId, retried: req.idempotency.retried } } : {}),
})
