import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

// HMAC secrets must be read back to sign, so they are encrypted, not hashed (DESIGN §3.1):
// AES-256-GCM under SECRETS_KEY, a fresh 96-bit nonce each time, the tag authenticating it.
const VERSION = 'v1'

export function encryptSecret(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.')
}

/** Throws when the value was not made with this key (or was tampered with). */
export function decryptSecret(key: Buffer, sealed: string): string {
  const [version, iv, tag, body] = sealed.split('.')
  if (version !== VERSION || !iv || !tag || body === undefined) throw new Error('unrecognised sealed secret')
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
  decipher.setAuthTag(Buffer.from(tag, 'base64url'))
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8')
}
