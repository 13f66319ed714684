import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

// Whatever must be read back but never sit in the clear (HMAC secrets, DESIGN §3.1; responses
// kept for Idempotency-Key replays) is sealed with AES-256-GCM under SECRETS_KEY: a fresh 96-bit
// nonce each time, the tag authenticating it.
const VERSION = 'v1'
const SEALED = /^v\d+\./

/**
 * `context`, when given, is authenticated but not stored (GCM's additional data): the value only
 * opens with the same context, so a sealed value copied to another record does not open there.
 */
export function encryptSecret(key: Buffer, plaintext: string, context?: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  if (context !== undefined) cipher.setAAD(Buffer.from(context, 'utf8'))
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.')
}

/** Throws when the value was not made with this key and context (or was tampered with). */
export function decryptSecret(key: Buffer, sealed: string, context?: string): string {
  const [version, iv, tag, body] = sealed.split('.')
  if (version !== VERSION || !iv || !tag || body === undefined) throw new Error('unrecognised sealed secret')
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
  if (context !== undefined) decipher.setAAD(Buffer.from(context, 'utf8'))
  decipher.setAuthTag(Buffer.from(tag, 'base64url'))
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8')
}

/** Whether a stored value is in a sealed format (any version); JSON text never starts this way. */
export const isSealed = (value: string): boolean => SEALED.test(value)
