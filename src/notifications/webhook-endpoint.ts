import type { Platform } from '../platform.js'
import { decryptSecret } from '../shared/secret-box.js'

/** Where one outbox row is sent and the secrets that sign it; the reasons say why a call cannot go. */
export interface Endpoint { url: string | null; secrets: string[]; noUrl: string; noSecret: string }

/** The sealed secret only opens for the webhook it was made for (GCM additional data). */
export const secretContext = (webhookId: string) => `webhook:${webhookId}`

/**
 * Where an organization webhook's delivery goes and its signing secret, read per claim (a delete
 * applies to the next call). A deleted webhook has no URL: its pending deliveries fail and stay in
 * the log. The dispatcher's look-up for `webhook` targets; the webhooks module seals the secret with
 * `secretContext` and knows nothing of the dispatcher.
 */
export async function webhookEndpoint(platform: Platform, webhookId: string): Promise<Endpoint> {
  const row = await platform.rm.selectFrom('webhooks').select(['url', 'secret_encrypted', 'deleted_at']).where('id', '=', webhookId).executeTakeFirst()
  const live = row !== undefined && row.deleted_at === null
  let secrets: string[] = []
  if (live) {
    try {
      secrets = [decryptSecret(platform.secretsKey, row.secret_encrypted, secretContext(webhookId))]
    } catch {
      secrets = [] // a secret sealed under another SECRETS_KEY: reported as no secret, never sent unsigned
    }
  }
  return { url: live ? row.url : null, secrets, noUrl: 'the webhook was deleted', noSecret: 'the webhook secret cannot be opened (SECRETS_KEY changed?)' }
}
