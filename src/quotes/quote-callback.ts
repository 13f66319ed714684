import { Value } from 'typebox/value'
import { QuoteCallbackReply } from '../../schemas/api/quotes.js'
import { signingSecrets } from '../carriers/credentials.js'
import { postJson } from '../notifications/safe-http.js'
import { signHeaders } from '../notifications/signing.js'
import { publicId } from '../shared/ids.js'
import type { Platform } from '../platform.js'

export interface CallbackQuote {
  price: number
  currency: string
  estimated_delivery_days: number | null
}

/**
 * Asks a carrier in quote mode `api` for its price: a POST to its quote URL signed like a webhook
 * (DESIGN §3.6), re-checked against DNS rebinding at send time. Anything but a valid 2xx reply
 * before `deadline` (a `performance.now()` instant: the quote request's arrival + QUOTE_TIMEOUT_MS)
 * is undefined, and the caller falls back to the tariff.
 */
export async function askCarrierForQuote(platform: Platform, carrierId: string, quoteUrl: string, payload: Record<string, unknown>, deadline: number): Promise<CallbackQuote | undefined> {
  const secrets = await signingSecrets(platform, carrierId)
  if (secrets.length === 0) return undefined
  const id = publicId('ntf').replace(/^ntf_/, 'qte_')
  const body = JSON.stringify({ quote_id: id, ...payload })
  const headers = signHeaders(secrets, id, platform.clock(), body)
  const budget = Math.min(platform.config.quoteTimeoutMs, Math.floor(deadline - performance.now()))
  if (budget <= 0) return undefined
  const res = await postJson(quoteUrl, body, { ...headers }, { timeoutMs: budget, allowPrivate: platform.config.allowPrivateUrls })
  if (res.status < 200 || res.status >= 300) return undefined
  let reply: unknown
  try { reply = JSON.parse(res.body) } catch { return undefined }
  if (!Value.Check(QuoteCallbackReply, reply)) return undefined
  const r = reply as { price: number; currency: string; estimated_delivery_days?: number | null }
  return { price: r.price, currency: r.currency.toUpperCase(), estimated_delivery_days: r.estimated_delivery_days ?? null }
}
