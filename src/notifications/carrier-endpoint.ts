import type { Platform } from '../platform.js'
import { decryptSecret } from '../shared/secret-box.js'
import type { Endpoint } from './webhook-endpoint.js'

/** Every HMAC secret of the carrier valid now, newest first: during a rotation both sign. */
export async function signingSecrets(platform: Platform, carrierId: string): Promise<string[]> {
  const now = platform.clock()
  const rows = await platform.rm.selectFrom('carrier_secrets').select(['secret_encrypted', 'expires_at'])
    .where('carrier_id', '=', carrierId).orderBy('created_at', 'desc').execute()
  return rows.filter((r) => !r.expires_at || r.expires_at > now).map((r) => decryptSecret(platform.secretsKey, r.secret_encrypted))
}

/**
 * Where a carrier notification goes and the secrets that sign it, read per claim, not cached: a
 * new URL or a rotated secret applies to the very next call. The dispatcher's look-up for `carrier`
 * targets; the carriers module writes both and knows nothing of the dispatcher.
 */
export async function carrierEndpoint(platform: Platform, carrierId: string): Promise<Endpoint> {
  const [row, secrets] = await Promise.all([
    platform.rm.selectFrom('carriers').select('notification_url').where('id', '=', carrierId).executeTakeFirst(),
    signingSecrets(platform, carrierId),
  ])
  return {
    url: row?.notification_url ?? null, secrets,
    noUrl: 'the carrier has no notification_url', noSecret: 'the carrier has no valid hmac secret',
  }
}
