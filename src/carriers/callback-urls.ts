import { validateCallbackUrl } from '../notifications/url-safety.js'
import type { ErrorBag } from '../shared/errors.js'
import type { Platform } from '../platform.js'

interface UrlFields {
  notification_url?: string | null | undefined
  quote_url?: string | null | undefined
  quote_mode?: 'tariff' | 'api' | undefined
}

/**
 * Save-time checks of the carrier's URLs (DESIGN §3.5): absolute http(s), resolvable, public
 * unless ALLOW_PRIVATE_URLS. `current` is the stored carrier, so quote mode `api` can rely on a
 * quote URL saved earlier.
 */
export async function checkCallbackUrls(platform: Platform, body: UrlFields, errors: ErrorBag, current?: UrlFields): Promise<void> {
  const opts = { allowPrivate: platform.config.allowPrivateUrls }
  await Promise.all((['notification_url', 'quote_url'] as const).map(async (field) => {
    const value = body[field]
    if (value === undefined || value === null) return
    const verdict = await validateCallbackUrl(value, opts)
    if (!verdict.ok) errors.add(field, `The ${field.replace('_', ' ')} ${verdict.reason}.`)
  }))
  const mode = body.quote_mode ?? current?.quote_mode ?? 'tariff'
  const quoteUrl = body.quote_url !== undefined ? body.quote_url : current?.quote_url
  if (mode === 'api' && !quoteUrl) errors.add('quote_url', 'The quote url is required when the quote mode is api.')
}
