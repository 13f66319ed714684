import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { FastifyReply } from 'fastify'
import { Type } from 'typebox'
import { ErrorResponse, errorResponses } from '../../../schemas/api/common.js'
import { LiveLink, LiveLinkBody, LiveTokenParams, RouteProgressParams } from '../../../schemas/api/route-progress.js'
import { addressRateLimit } from '../../http/address-rate-limit.js'
import { organizationOf } from '../../http/plugins/auth.js'
import type { RoutesPlugin } from '../../http/module.js'
import { publicUrl } from '../../http/public-url.js'
import { NotFoundError } from '../../shared/errors.js'
import { openEventStream, lastEventIdOf } from './event-stream.js'
import { readFeedRoute } from './feed-queries.js'
import { hubOf } from './hub-of.js'
import { EXPIRED_PAGE, LIVE_PAGE } from './live-page.js'
import { livePageData, onDriverPositions } from './live-page-data.js'
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
    return reply.code(201).send({ url: publicUrl(req, `/live/routes/${token}`), expires_at: expiresAt.toISOString() })
  })
}

/** Where Leaflet is served from (the project's own node_modules): only asked for when MAP_TILE_URL is set. */
const require = createRequire(import.meta.url)
const LEAFLET_DIR = dirname(require.resolve('leaflet/dist/leaflet.js'))
// A Map, not an object literal: a name from the URL such as `constructor` or `__proto__` must find
// nothing, not a member every object inherits (which had no file to read: a 500).
const ASSETS: ReadonlyMap<string, { file: string; type: string }> = new Map([
  ['leaflet.js', { file: 'leaflet.js', type: 'text/javascript; charset=utf-8' }],
  ['leaflet.css', { file: 'leaflet.css', type: 'text/css; charset=utf-8' }],
])

/**
 * The page's and its data's headers: the token is in the address, so no referrer ever carries it on;
 * no script from anywhere else; with tiles (MAP_TILE_URL), Leaflet from this server and images from
 * the tile host only. Nothing is kept by a shared cache.
 */
export function livePageHeaders(tileUrl: string | undefined, type = 'text/html; charset=utf-8'): Record<string, string> {
  // `https://{s}.tile.example.org/{z}/{x}/{y}.png`: the origin, a subdomain placeholder as a wildcard.
  const tiles = tileUrl ? /^https?:\/\/[^/]+/.exec(tileUrl)?.[0].replace('{s}', '*') : undefined
  const self = tiles ? " 'self'" : ''
  return {
    'content-type': type,
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'content-security-policy': `default-src 'none'; script-src 'unsafe-inline'${self}; style-src 'unsafe-inline'${self}; img-src data:${tiles ? ` ${tiles}` : ''}; ` +
      "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  }
}

/** `/live/routes/<token>`, its data and its stream: no bearer token (a browser's EventSource cannot send one); the link is the credential. */
export const livePageRoutes: RoutesPlugin = async (app, { platform }) => {
  const key = liveLinkKey(platform.secretsKey)
  const hub = await hubOf(platform, app.log)
  app.addHook('preClose', (done) => { hub.endAll(); done() })
  // Anyone may try a link: each client address has a budget for the page, its data, stream and assets.
  app.addHook('onRequest', addressRateLimit(platform, 'live', platform.config.livePageRateLimitPerMinute))
  const tileUrl = platform.config.mapTileUrl
  const headers = livePageHeaders(tileUrl)
  const jsonHeaders = livePageHeaders(tileUrl, 'application/json; charset=utf-8')

  /** The route the token opens, or null: unknown, altered or expired alike. */
  const routeOf = async (token: string) => {
    const claim = parseLiveToken(token)
    if (!claim) return null
    const route = await readFeedRoute(platform.rm, claim.routeId)
    if (!route || !liveTokenValid(key, claim, route.organization_id, platform.clock())) return null
    return { route, expiresAt: claim.expiresAt }
  }

  const page = (reply: FastifyReply, status: number, html: string) => reply.code(status).headers(headers).send(html)

  app.get('/live/routes/:token', { schema: { hide: true, params: LiveTokenParams } }, async (req, reply) =>
    (await routeOf(req.params.token)) ? page(reply, 200, LIVE_PAGE) : page(reply, 404, EXPIRED_PAGE))

  // What the page shows, for that route alone (the token names it; nothing else is reachable through it).
  app.get('/live/routes/:token/data', { schema: { hide: true, params: LiveTokenParams } }, async (req, reply) => {
    const found = await routeOf(req.params.token)
    const data = found && await livePageData(platform, found.route.organization_id, found.route.route_id)
    if (!data) throw new NotFoundError('Live link')
    return reply.headers(jsonHeaders).send(data)
  })

  app.get('/live/assets/:name', { schema: { hide: true, params: Type.Object({ name: Type.String({ maxLength: 32 }) }) } }, async (req, reply) => {
    const asset = ASSETS.get(req.params.name)
    if (!asset) throw new NotFoundError('Asset')
    return reply.headers({ 'content-type': asset.type, 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' })
      .send(await readFile(join(LEAFLET_DIR, asset.file)))
  })

  app.get('/live/routes/:token/stream', { schema: { hide: true, params: LiveTokenParams } }, async (req, reply) => {
    const lastEventId = lastEventIdOf(req)
    const found = await routeOf(req.params.token)
    if (!found) throw new NotFoundError('Live link')
    const { organization_id: organizationId, route_id: routeId } = found.route
    let driverId = found.route.driver_id
    openEventStream(req, reply, {
      rm: platform.rm, hub, routeId, lastEventId, heartbeatMs: platform.config.sseHeartbeatMs, endsAt: found.expiresAt,
      // The route's driver may change (`route.updated`): its positions are the new driver's from then on.
      stillVisible: async () => {
        driverId = (await readFeedRoute(platform.rm, routeId))?.driver_id ?? null
        return true
      },
      // The driver's positions as they arrive at any API process (one NOTIFY per stored batch).
      extra: (send) => onDriverPositions(platform, (n) => {
        if (n.organization_id !== organizationId || n.driver_id !== driverId) return
        send('driver.position', JSON.stringify({ route_id: routeId, lat: n.lat, lng: n.lng, recorded_at: n.recorded_at, heading: n.heading ?? null }))
      }),
    })
    return reply
  })
}
