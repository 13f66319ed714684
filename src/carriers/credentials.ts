import { randomBytes } from 'node:crypto'
import { generateSecret } from '../notifications/signing.js'
import { publicId } from '../shared/ids.js'
import type { Platform } from '../platform.js'
import { decryptSecret, encryptSecret } from '../shared/secret-box.js'
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

/** Every HMAC secret of the carrier valid now, newest first: during a rotation both sign. */
export async function signingSecrets(platform: Platform, carrierId: string): Promise<string[]> {
  const now = platform.clock()
  const rows = await platform.rm.selectFrom('carrier_secrets').select(['secret_encrypted', 'expires_at'])
    .where('carrier_id', '=', carrierId).orderBy('created_at', 'desc').execute()
  return rows.filter((r) => !r.expires_at || r.expires_at > now).map((r) => decryptSecret(platform.secretsKey, r.secret_encrypted))
}
