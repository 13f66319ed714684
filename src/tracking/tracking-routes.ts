import type { FastifyReply, FastifyRequest } from 'fastify'
import { ErrorResponse } from '../../schemas/api/common.js'
import { TrackingTokenParams, TrackingView } from '../../schemas/api/tracking.js'
import { addressRateLimit } from '../http/address-rate-limit.js'
import type { RoutesPlugin } from '../http/module.js'
import { POSITIONS_CHANNEL } from '../positions/positions-table.js'
import { NotFoundError, ValidationError } from '../shared/errors.js'
import { acceptedLocale, trackingLocale } from './locale.js'
import { isOpen, loadTrackingFacts, type TrackingFacts } from './tracking-facts.js'
import { TrackingHub } from './tracking-hub.js'
import { NOT_AVAILABLE_PAGES, TRACKING_CSP, TRACKING_PAGES } from './tracking-page.js'
import { trackingKey, TOKEN_MAX, verifyTrackingToken } from '../shipments/tracking-token.js'
import { trackingView } from './tracking-view.js'
import { openTrackingStream } from './tracking-stream.js'

/** On every answer under /track, found or not: the token in the address goes nowhere, nothing is cached by others. */
const SAFETY_HEADERS = {
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'private, no-store',
  'content-security-policy': TRACKING_CSP,
  'x-frame-options': 'DENY',
}

/** Only ids this server sends (view hashes); anything else is a client's mistake, answered 422. */
const lastIdOf = (req: FastifyRequest): string | null => {
  const raw = req.headers['last-event-id']
  if (raw === undefined) return null
  const text = (Array.isArray(raw) ? raw[0] ?? '' : raw).trim()
  if (!/^[\w-]{16}$/.test(text)) throw ValidationError.field('Last-Event-ID', 'must be the id of an event of this stream.')
  return text
}

/**
 * Public tracking (DESIGN §3.10): `/track/<token>` (the page), `/data` (its JSON) and `/stream`
 * (server-sent events). No bearer token: the link is the credential, checked in constant time;
 * rate limited per client address (`TRACKING_RATE_LIMIT_PER_MINUTE`).
 */
export const trackingRoutes: RoutesPlugin = async (app, { platform }) => {
  const key = trackingKey(platform.secretsKey)
  const hub = new TrackingHub(platform, (err) => app.log.warn({ err }, 'tracking: reading a shipment failed'))
  const unsubscribe = await platform.changes.subscribe(hub.subscriber)
  const unlisten = await platform.database.listen(POSITIONS_CHANNEL, (p) => hub.position(p))
  app.addHook('preClose', (done) => { hub.endAll(); done() })
  app.addHook('onClose', async () => { unsubscribe(); await unlisten() })

  const limit = addressRateLimit(platform, 'tracking', platform.config.trackingRateLimitPerMinute)
  app.addHook('onRequest', async (req, reply) => {
    // Before the limit: a 429 carries them too.
    reply.headers(SAFETY_HEADERS)
    await limit(req)
  })

  /** The facts the token opens, or null: malformed, altered, not public, lapsed, unknown alike. */
  const open = async (token: string): Promise<{ ulid: string; facts: TrackingFacts } | null> => {
    const ulid = token.length <= TOKEN_MAX ? verifyTrackingToken(key, token) : null
    if (!ulid) return null
    const facts = await loadTrackingFacts(platform, ulid)
    return facts && isOpen(facts, platform.clock()) ? { ulid, facts } : null
  }
  const localeOf = (req: FastifyRequest, facts: TrackingFacts | null) => trackingLocale(req.headers['accept-language'], facts?.organizationLocale)
  const html = (reply: FastifyReply, status: number, body: string) => reply.code(status).type('text/html; charset=utf-8').send(body)

  app.get('/track/:token', { schema: { hide: true, params: TrackingTokenParams } }, async (req, reply) => {
    const found = await open(req.params.token)
    if (!found) return html(reply, 404, NOT_AVAILABLE_PAGES[acceptedLocale(req.headers['accept-language']) ?? 'en'])
    return html(reply, 200, TRACKING_PAGES[localeOf(req, found.facts)])
  })

  app.get('/track/:token/data', {
    schema: { hide: true, params: TrackingTokenParams, response: { 200: TrackingView, 404: ErrorResponse } },
  }, async (req) => {
    const found = await open(req.params.token)
    if (!found) throw new NotFoundError('Tracking')
    return trackingView(found.facts, localeOf(req, found.facts))
  })

  // The proof photo, only where the carrier shows photos publicly (organization setting public_proof_photos).
  app.get('/track/:token/photo', { schema: { hide: true, params: TrackingTokenParams } }, async (req, reply) => {
    const found = await open(req.params.token)
    const photo = found?.facts.proof?.photo
    const data = photo ? await platform.blobs.get(photo.blobKey) : null
    if (!photo || !data) throw new NotFoundError('Photo')
    return reply.type(photo.contentType).send(data)
  })

  app.get('/track/:token/stream', { schema: { hide: true, params: TrackingTokenParams } }, async (req, reply) => {
    const lastId = lastIdOf(req)
    const found = await open(req.params.token)
    if (!found) throw new NotFoundError('Tracking')
    openTrackingStream(req, reply, { hub, ulid: found.ulid, locale: localeOf(req, found.facts), lastId, heartbeatMs: platform.config.sseHeartbeatMs })
    return reply
  })
}
