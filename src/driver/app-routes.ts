import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { RoutesPlugin } from '../http/module.js'
import { addressRateLimit } from '../http/address-rate-limit.js'
import { NotFoundError } from '../shared/errors.js'
import { loadAppAssets, type Asset } from './app-assets.js'

/**
 * Everything from this origin, no inline script or style, nothing framed; images may be the
 * phone's own photo (blob:) and the signature canvas (data:). The API is this origin too.
 */
export const DRIVER_APP_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; " +
  "manifest-src 'self'; worker-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const HEADERS = {
  'content-security-policy': DRIVER_APP_CSP,
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
}

/** Requests a client address may make for the app's files a minute (a phone loads a dozen at most). */
const APP_REQUESTS_PER_MINUTE = 240

/**
 * `/driver` (issue 38): the driver's installable app, served by this server alone. The page and the
 * service worker are revalidated on every load (`no-cache` with an ETag) so a new version reaches
 * the phone; the service worker keeps the copy that opens without network.
 */
export const driverAppRoutes: RoutesPlugin = async (app, { platform }) => {
  const { assets } = loadAppAssets()
  const limit = addressRateLimit(platform, 'driver-app', APP_REQUESTS_PER_MINUTE)

  const send = (req: FastifyRequest, reply: FastifyReply, asset: Asset, extra: Record<string, string> = {}) => {
    reply.headers({ ...HEADERS, 'content-type': asset.type, 'cache-control': 'no-cache', etag: asset.etag, ...extra })
    if (req.headers['if-none-match'] === asset.etag) return reply.code(304).send()
    return reply.send(asset.body)
  }

  app.get('/driver', { onRequest: limit, schema: { hide: true } }, async (req, reply) => send(req, reply, assets.get('index.html')!))

  app.get('/driver/:name', { onRequest: limit, schema: { hide: true, params: Type.Object({ name: Type.String({ maxLength: 40 }) }) } }, async (req, reply) => {
    const { name } = req.params
    const asset = name === 'index.html' ? undefined : assets.get(name)
    if (!asset) throw new NotFoundError('File')
    // The worker at /driver/sw.js serves the page at /driver, one level up: its scope is allowed here.
    return send(req, reply, asset, name === 'sw.js' ? { 'service-worker-allowed': '/driver' } : {})
  })
}
