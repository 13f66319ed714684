import type { FastifyRequest } from 'fastify'
import type { Platform } from '../platform.js'
import { publicUrl } from '../http/public-url.js'
import { signTrackingToken, trackingKey } from './tracking-token.js'

const keys = new WeakMap<Buffer, Buffer>()
const keyOf = (secretsKey: Buffer) => {
  let k = keys.get(secretsKey)
  if (!k) keys.set(secretsKey, (k = trackingKey(secretsKey)))
  return k
}

/** The shipment's public tracking link, for `public_tracking_url`. */
export const trackingUrl = (req: FastifyRequest, platform: Platform, ulid: string): string =>
  publicUrl(req, `/track/${signTrackingToken(keyOf(platform.secretsKey), ulid)}`)

/** What `toShipment` needs to state `public_tracking_url` for one request. */
export const trackingLinks = (req: FastifyRequest, platform: Platform) => ({ tracking: (ulid: string) => trackingUrl(req, platform, ulid) })

/** True when `public_tracking_url` depends on the request (no PUBLIC_BASE_URL): such an answer is not cached across requests. */
export const linksVaryByRequest = (platform: Platform): boolean => platform.config.publicBaseUrl === undefined
