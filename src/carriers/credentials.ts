import { randomBytes } from 'node:crypto'
import { generateSecret } from '../notifications/signing.js'
import { publicId } from '../shared/ids.js'
import { encryptSecret } from '../shared/secret-box.js'
import { hashToken } from '../shared/tokens.js'

/** How long a rotated-out API key and HMAC secret keep working (DESIGN §3.5). */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000

export interface NewCredentials {
  apiKey: string
  keyId: string
  keyHash: string
  hmacSecret: string
  secretId: string
  secretEncrypted: string
}

/** A fresh API key (kept only as a hash) and `whsec_` secret (kept only encrypted); both shown once. */
export function newCredentials(secretsKey: Buffer): NewCredentials {
  const apiKey = `ck_${randomBytes(32).toString('base64url')}`
  const hmacSecret = generateSecret()
  return {
    apiKey, keyId: publicId('tok'), keyHash: hashToken(apiKey),
    hmacSecret, secretId: publicId('tok'), secretEncrypted: encryptSecret(secretsKey, hmacSecret),
  }
}

// The secrets are read where the notifications' dispatcher reads them (it sits below this module);
// quotes and the tests find them here, with the rest of a carrier's credentials.
export { signingSecrets } from '../notifications/carrier-endpoint.js'
