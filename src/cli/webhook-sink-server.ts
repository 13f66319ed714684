import http from 'node:http'
import { Webhook } from 'standardwebhooks'
import { listenOn, readBodyText } from '../shared/plain-http.js'
import { messageOf } from '../shared/thrown.js'
import type { CheckpointKeeper, KeptCheckpoint } from './webhook-sink-checkpoints.js'

/** One delivery as the sink saw it; `verified` is false when no secret was given or none matched. */
export interface SinkDelivery {
  verified: boolean
  /** Why it is not verified (no secret, bad signature, stale timestamp…); absent when verified. */
  reason?: string
  webhookId: string | undefined
  event: string | undefined
  notificationId: string | undefined
  shipmentId: string | number | undefined
  carrierId: string | undefined
  /** An organization webhook's subject (`data.ulid` of a task event, `data.id` of others). */
  subjectId: string | undefined
  status: number
  /** The `Audit-Checkpoint` the webhook carried, as the keeper judged it (with --checkpoints). */
  checkpoint?: KeptCheckpoint
  /** `Audit-Leaf-Index`: the event's leaf in that checkpoint's tree. */
  leafIndex?: string
}

export interface WebhookSinkOptions {
  /** 0 picks a free port. */
  port: number
  /** Every `whsec_` secret to accept (during a key rotation the platform signs with the old and the new). */
  secrets: string[]
  /** Loopback only: this is a development receiver, never exposed. */
  host?: string
  onDelivery(delivery: SinkDelivery): void
  /** Keeps the checkpoints verified deliveries carry, and catches a rewrite. */
  keeper?: CheckpointKeeper
}

export interface WebhookSink {
  url: string
  port: number
  close(): Promise<void>
}

// Webhook bodies are a few hundred bytes; anything far larger is not ours.
const MAX_BODY = 1 << 20

/**
 * A loopback receiver for the platform's carrier webhooks (the counterpart of `stripe listen`):
 * it verifies the Standard Webhooks signature with the carrier's secret, reports each delivery,
 * and answers as a careful receiver would: 2xx when verified (or when it was given no secret
 * to check with), 401 when the signature does not verify, so the platform logs and retries it.
 */
export async function startWebhookSink(opts: WebhookSinkOptions): Promise<WebhookSink> {
  // Built once: a malformed secret should stop the sink at start, not fail every delivery.
  const verifiers = opts.secrets.map((secret) => {
    try {
      return new Webhook(secret)
    } catch (err) {
      throw new Error(`"${secret}" is not a Standard Webhooks secret (whsec_<base64>): ${messageOf(err)}`)
    }
  })
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST', 'content-type': 'application/json' }).end('{"message":"POST webhooks here"}')
      return
    }
    void (async () => {
      const body = await readBodyText(req, res, MAX_BODY)
      if (body === null) return
      const headers = textHeaders(req.headers)
      const check = verify(verifiers, body, headers)
      const status = check.ok ? 204 : 401
      const carried = headers['audit-checkpoint']
      // Only a delivery that verified (or a sink given no secret) feeds the kept checkpoints.
      const checkpoint = carried && check.ok && opts.keeper ? await opts.keeper.receive(carried) : undefined
      opts.onDelivery({
        ...(checkpoint ? { checkpoint } : {}),
        ...(headers['audit-leaf-index'] ? { leafIndex: headers['audit-leaf-index'] } : {}),
        verified: check.ok && check.checked,
        ...(check.ok ? (check.checked ? {} : { reason: 'no secret given' }) : { reason: check.reason }),
        webhookId: headers['webhook-id'],
        ...parseFields(body),
        status,
      })
      if (check.ok) res.writeHead(status).end()
      else res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `signature not verified: ${check.reason}` }))
    })()
  })
  const port = await listenOn(server, opts.port, opts.host ?? '127.0.0.1')
  return {
    port,
    url: `http://${opts.host ?? '127.0.0.1'}:${port}/hooks`,
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** The headers that arrived once: Node joins repeats of the signature headers into one value; only a few others (set-cookie) stay lists. */
function textHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) if (typeof value === 'string') out[name] = value
  return out
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null

/** `checked: false`: accepted without a secret to check with. */
function verify(verifiers: Webhook[], body: string, headers: Record<string, string>): { ok: true; checked: boolean } | { ok: false; reason: string } {
  if (verifiers.length === 0) return { ok: true, checked: false }
  let reason = 'no signature matches'
  for (const v of verifiers) {
    try {
      v.verify(body, headers)
      return { ok: true, checked: true }
    } catch (err) {
      reason = messageOf(err)
    }
  }
  return { ok: false, reason }
}

/** Carrier notifications `{notification_id, event, shipment_id, carrier_id}` and organization webhooks `{id, type, data}`. */
function parseFields(body: string): Pick<SinkDelivery, 'event' | 'notificationId' | 'shipmentId' | 'carrierId' | 'subjectId'> {
  let json: Record<string, unknown> = {}
  try {
    const parsed: unknown = JSON.parse(body)
    if (isRecord(parsed)) json = parsed
  } catch { /* reported as a delivery without an event */ }
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined)
  const shipment = json.shipment_id
  const data = isRecord(json.data) ? json.data : {}
  return {
    event: str(json.event) ?? str(json.type),
    subjectId: str(data.ulid) ?? str(data.id),
    notificationId: str(json.notification_id),
    shipmentId: typeof shipment === 'number' || typeof shipment === 'string' ? shipment : undefined,
    carrierId: str(json.carrier_id),
  }
}

/** One line per delivery, e.g. `verified new shipment_id=2 notification_id=ntf_… carrier_id=car_… webhook-id=ntf_… → 204`. */
export function formatDelivery(d: SinkDelivery): string {
  const head = d.verified ? 'verified' : `UNVERIFIED (${d.reason})`
  const audit = d.checkpoint
    ? [d.checkpoint.outcome === 'rewrite' ? `REWRITE checkpoint=${d.checkpoint.size}: ${d.checkpoint.detail}` : `checkpoint=${d.checkpoint.size ?? '?'} ${d.checkpoint.outcome}${d.checkpoint.detail ? ` (${d.checkpoint.detail})` : ''}`]
    : []
  const ids = [
    ['shipment_id', d.shipmentId], ['notification_id', d.notificationId], ['carrier_id', d.carrierId], ['subject', d.subjectId], ['webhook-id', d.webhookId],
  ].filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${v}`)
  const leaf = d.leafIndex !== undefined ? [`leaf=${d.leafIndex}`] : []
  return [head, d.event ?? '(no event)', ...ids, `→ ${d.status}`, ...leaf, ...audit].join(' ')
}
