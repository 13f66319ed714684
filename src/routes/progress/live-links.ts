import type { FastifyReply } from 'fastify'
import { ErrorResponse, errorResponses } from '../../../schemas/api/common.js'
import { LiveLink, LiveLinkBody, LiveTokenParams, RouteProgressParams } from '../../../schemas/api/route-progress.js'
import { organizationOf } from '../../http/plugins/auth.js'
import type { RoutesPlugin } from '../../http/module.js'
import { NotFoundError } from '../../shared/errors.js'
import { openEventStream, lastEventIdOf } from './event-stream.js'
import { readFeedRoute } from './feed-queries.js'
import { hubOf } from './hub-of.js'
import { EXPIRED_PAGE, LIVE_PAGE } from './live-page.js'
import { DEFAULT_TTL_MINUTES, liveLinkKey, liveTokenValid, parseLiveToken, signLiveToken } from './live-token.js'

/** POST /routes/{id}/live-links (organization and dispatchers): a signed, expiring, read-only link to the live page. */
export const liveLinkRoutes: RoutesPlugin = async (app, { platform }) => {
  const key = liveLinkKey(platform.secretsKey)
  app.post('/routes/:id/live-links', {
    schema: {
      tags: ['routes'], summary: 'A signed, expiring, read-only link to the route\'s live page (for a browser: no token needed)',
      params: RouteProgressParams, body: LiveLinkBody, response: { 201: LiveLink, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req, reply) => {
    const organizationId = organizationOf(req).id
    const route = await readFeedRoute(platform.rm, req.params.id)
    if (!route || route.organization_id !== organizationId) throw new NotFoundError('Route')
    const ttl = req.body?.ttl_minutes ?? DEFAULT_TTL_MINUTES
    const expiresAt = new Date(platform.clock().getTime() + ttl * 60_000)
    expiresAt.setUTCMilliseconds(0)
    const token = signLiveToken(key, route.route_id, organizationId, expiresAt)
    return reply.code(201).send({ url: `${req.protocol}://${req.host}/live/routes/${token}`, expires_at: expiresAt.toISOString() })
  })
}

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  // The token is in the page's address: never sent on to anyone.
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
}

/** `/live/routes/<token>` and its stream: no bearer token (a browser's EventSource cannot send one); the link is the credential. */
export const livePageRoutes: RoutesPlugin = async (app, { platform }) => {
  const key = liveLinkKey(platform.secretsKey)
  const hub = await hubOf(platform, app.log)
  app.addHook('preClose', (done) => { hub.endAll(); done() })

  /** The route the token opens, or null: unknown, altered or expired alike. */
  const routeOf = async (token: string) => {
    const claim = parseLiveToken(token)
    if (!claim) return null
    const route = await readFeedRoute(platform.rm, claim.routeId)
    if (!route || !liveTokenValid(key, claim, route.organization_id, platform.clock())) return null
    return { route, expiresAt: claim.expiresAt }
  }

  const page = (reply: FastifyReply, status: number, html: string) => reply.code(status).headers(PAGE_HEADERS).send(html)

  app.get('/live/routes/:token', { schema: { hide: true, params: LiveTokenParams } }, async (req, reply) =>
    (await routeOf(req.params.token)) ? page(reply, 200, LIVE_PAGE) : page(reply, 404, EXPIRED_PAGE))

  app.get('/live/routes/:token/stream', { schema: { hide: true, params: LiveTokenParams } }, async (req, reply) => {
    const lastEventId = lastEventIdOf(req)
    const found = await routeOf(req.params.token)
    if (!found) throw new NotFoundError('Live link')
    openEventStream(req, reply, {
      rm: platform.rm, hub, routeId: found.route.route_id, lastEventId, heartbeatMs: platform.config.sseHeartbeatMs, endsAt: found.expiresAt,
    })
    return reply
  })
}
