import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'

export interface SignatureHeaders {
  'webhook-id': string
  'webhook-timestamp': string
  'webhook-signature': string
}

const SECRET_PREFIX = 'whsec_'
// Standard Webhooks asks for 24–64 bytes of key; 32 matches the HMAC-SHA256 block output.
const SECRET_BYTES = 32

/** A new `hmac_secret`, `whsec_<base64 of 32 random bytes>`, the form every Standard Webhooks verifier accepts. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64')
}

/**
 * Signature headers of one call (webhook or quote callback, DESIGN §3.6). Each secret signs
 * through the package's `Webhook.sign`, which yields `v1,<base64 HMAC-SHA256 of "{id}.{ts}.{body}">`;
 * during a key rotation both the old and the new secret sign, space-separated, and a verifier
 * holding either one accepts the call. `timestamp` is sent in whole Unix seconds, as signed.
 */
export function signHeaders(secrets: string[], msgId: string, timestamp: Date, body: string): SignatureHeaders {
  const unique = [...new Set(secrets)]
  if (unique.length === 0) throw new Error('signHeaders needs at least one secret')
  const signatures = unique.map((secret) => new Webhook(secret).sign(msgId, timestamp, body))
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  }
}
