import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto'

/**
 * Public tracking links (DESIGN §3.10): `<shipment ulid>.<HMAC of it>`, so nothing is stored and
 * nothing can be guessed. The HMAC is SHA-256 under a key of its own derived from SECRETS_KEY,
 * cut to 128 bits (22 base64url characters): guessing one is 2^-128 a try (docs/decisions.md).
 */
export const trackingKey = (secretsKey: Buffer): Buffer => Buffer.from(hkdfSync('sha256', secretsKey, Buffer.alloc(0), 'shipment-tracking/v1', 32))

const MAC_BYTES = 16
const mac = (key: Buffer, ulid: string) => createHmac('sha256', key).update(`tracking.${ulid}`).digest().subarray(0, MAC_BYTES).toString('base64url')

export function signTrackingToken(key: Buffer, ulid: string): string {
  return `${ulid}.${mac(key, ulid)}`
}

/** The shipment ulid the token opens, or null when it is malformed or not signed here (checked in constant time). */
export function verifyTrackingToken(key: Buffer, token: string): string | null {
  const m = /^([0-9A-HJKMNP-TV-Z]{26})\.([\w-]{22})$/.exec(token)
  if (!m) return null
  const expected = Buffer.from(mac(key, m[1]!))
  const given = Buffer.from(m[2]!)
  return given.length === expected.length && timingSafeEqual(given, expected) ? m[1]! : null
}

/** What a route's path parameter may be before it is checked: anything else is the same "not available". */
export const TOKEN_MAX = 64
