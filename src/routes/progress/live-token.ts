import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto'

/** A live link's life when the request names none, and the longest it may ask for (docs/decisions.md). */
export const DEFAULT_TTL_MINUTES = 24 * 60
export const MAX_TTL_MINUTES = 7 * 24 * 60

/** Its own key, derived from SECRETS_KEY: a live-link signature is good for nothing else. */
export const liveLinkKey = (secretsKey: Buffer): Buffer => Buffer.from(hkdfSync('sha256', secretsKey, Buffer.alloc(0), 'route-live-links/v1', 32))

const mac = (key: Buffer, routeId: number, organizationId: string, expires: number) =>
  createHmac('sha256', key).update(`${routeId}.${organizationId}.${expires}`).digest('base64url')

/** `<route id>.<expiry, epoch seconds>.<HMAC of both and the route's organization>`. */
export function signLiveToken(key: Buffer, routeId: number, organizationId: string, expiresAt: Date): string {
  const expires = Math.floor(expiresAt.getTime() / 1000)
  return `${routeId}.${expires}.${mac(key, routeId, organizationId, expires)}`
}

/**
 * What a token claims, before its signature is checked against the route's organization. Only the
 * spelling signLiveToken writes: the numbers in canonical decimal, since `0<route>` or `0<expiry>`
 * would read as the same numbers and the signature would hold for a link that was never issued.
 */
export function parseLiveToken(token: string): { routeId: number; expiresAt: number; signature: string } | null {
  const m = /^(0|[1-9]\d{0,14})\.(0|[1-9]\d{0,11})\.([\w-]{43})$/.exec(token)
  if (!m) return null
  return { routeId: Number(m[1]), expiresAt: Number(m[2]) * 1000, signature: m[3]! }
}

/** True when the token was signed here for that route of that organization and has not expired. */
export function liveTokenValid(key: Buffer, token: { routeId: number; expiresAt: number; signature: string }, organizationId: string, now: Date): boolean {
  const expected = Buffer.from(mac(key, token.routeId, organizationId, token.expiresAt / 1000))
  const given = Buffer.from(token.signature)
  return given.length === expected.length && timingSafeEqual(given, expected) && token.expiresAt > now.getTime()
}
