import type { FastifyRequest } from 'fastify'
import type { Platform } from '../platform.js'
import { signTrackingToken, trackingKey } from './tracking-token.js'

/**
 * Where links the server hands out start: `PUBLIC_BASE_URL` when set, else the request's own
 * origin — the rule of live links and of the OpenAPI document's `servers` (DESIGN §3.10).
 */
export const linkOrigin = (req: FastifyRequest, platform: Platform): string =>
  platform.config.publicBaseUrl ?? `${req.protocol}://${req.host}`

const keys = new WeakMap<Buffer, Buffer>()
const keyOf = (secretsKey: Buffer) => {
  let k = keys.get(secretsKey)
  if (!k) keys.set(secretsKey, (k = trackingKey(secretsKey)))
  return k
}

/** The shipment's public tracking link, for `public_tracking_url`. */
export const trackingUrl = (req: FastifyRequest, platform: Platform, ulid: string): string =>
  `${linkOrigin(req, platform)}/track/${signTrackingToken(keyOf(platform.secretsKey), ulid)}`

/** What `toShipment` needs to state `public_tracking_url` for one request. */
export const trackingLinks = (req: FastifyRequest, platform: Platform) => ({ tracking: (ulid: string) => trackingUrl(req, platform, ulid) })

/** True when `public_tracking_url` depends on the request (no PUBLIC_BASE_URL): such an answer is not cached across requests. */
export const linksVaryByRequest = (platform: Platform): boolean => platform.config.publicBaseUrl === undefined
