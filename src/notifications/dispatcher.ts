import { Wakeup } from '../shared/wakeup.js'
import { carrierEndpoint } from './carrier-endpoint.js'
import { webhookEndpoint, type Endpoint } from './webhook-endpoint.js'
import type { Platform } from '../platform.js'
import { postJson } from './safe-http.js'
import { SpanKind, SpanStatusCode, startSpan, traceparentOfSpan } from '../infrastructure/tracing/tracing.js'
import { signHeaders } from './signing.js'
import { type AttemptResult, claimDue, recordAttempts, renewLeases, type DueNotification } from './outbox.js'
import { messageOf } from '../shared/thrown.js'
import { type AuditHeaders, WebhookCheckpoints } from '../audit/webhook-checkpoint.js'
import { auditOriginOf } from '../audit/log-origin.js'

export interface DispatcherOptions {
  /** Webhook calls in flight at once in this process. Default 200. */
  concurrency?: number
  /** Fallback poll for rows that became due elsewhere (another process's intake or lapsed claim). Default 1 s; this process's own retries wake it when due. */
  pollMs?: number
  /** Finished attempts are logged in batches this often. Default 50 ms. */
  flushMs?: number
  logger?: { error(obj: object, msg: string): void; warn?(obj: object, msg: string): void }
}

const EXCERPT = 500
/**
 * How long a claimed row stays this process's: renewed every third of it while its call runs (a
 * call may take WEBHOOK_TIMEOUT_MS), so a row whose process died is sent again within this long.
 */
const LEASE_MS = 3_000

// Dispatchers running in this process, so a manual redelivery can wake them instead of waiting for a poll.
const running = new Set<WebhookDispatcher>()
export const kickDispatchers = (): void => { for (const d of running) d.kick() }

/**
 * Sends due webhooks of every target (DESIGN §3.6, §3.9: carrier notifications and organization
 * webhooks, one engine): signed with every valid secret of the carrier or the webhook's secret, the URL checked
 * again at send time (DNS rebinding), 2xx within WEBHOOK_TIMEOUT_MS is success, every attempt
 * logged. A pipeline, not a batch barrier: it keeps up to `concurrency` calls in flight, claims
 * more rows as calls finish, and logs finished attempts in small batches. Any number of processes
 * may run one: rows are claimed with SKIP LOCKED and a lease that outlives a call, so a process
 * that dies leaves its rows to be sent again (same notification id) once the lease runs out.
 */
export class WebhookDispatcher {
  private readonly wakeup = new Wakeup()
  private readonly flushWakeup = new Wakeup()
  private stopped = true
  private done: Promise<void> = Promise.resolve()
  private readonly concurrency: number
  private readonly pollMs: number
  private readonly flushMs: number
  private inFlight = 0
  /** Rows whose call is under way: their leases are renewed until the attempt is logged. */
  private readonly leased = new Set<string>()
  private renewal: NodeJS.Timeout | undefined
  /** A wake-up at the next retry this process scheduled, so retries do not wait for the poll. */
  private retryWake: { at: number; timer: NodeJS.Timeout } | undefined
  private finished: AttemptResult[] = []
  private readonly checkpoints: WebhookCheckpoints

  constructor(private readonly platform: Platform, private readonly opts: DispatcherOptions = {}) {
    this.checkpoints = new WebhookCheckpoints(platform.db, () => platform.notaryKey, auditOriginOf(platform.config))
    this.concurrency = Math.max(1, opts.concurrency ?? 200)
    this.pollMs = opts.pollMs ?? 1000
    this.flushMs = opts.flushMs ?? 50
  }

  start(): void {
    if (!this.stopped) return
    this.stopped = false
    running.add(this)
    this.done = Promise.all([this.claimLoop(), this.flushLoop()]).then(() => undefined)
    this.renewal = setInterval(() => this.renewLeases(), LEASE_MS / 3)
    this.renewal.unref()
  }

  private renewLeases(): void {
    if (this.leased.size === 0) return
    renewLeases(this.platform.db, [...this.leased], LEASE_MS)
      .catch((err) => this.opts.logger?.error({ err }, 'webhook lease renewal failed'))
  }

  /** Stops claiming, lets the calls in flight finish, and logs them. */
  async stop(): Promise<void> {
    this.stopped = true
    running.delete(this)
    this.kick()
    this.flushWakeup.kick()
    await this.done
    clearInterval(this.renewal)
    if (this.retryWake) clearTimeout(this.retryWake.timer)
  }

  kick(): void { this.wakeup.kick() }

  /** Claims rows whenever half the pipeline is free (few, larger claims), and launches the calls. */
  private async claimLoop(): Promise<void> {
    while (!this.stopped) {
      let claimed = 0
      const room = this.concurrency - this.inFlight
      if (room >= Math.ceil(this.concurrency / 2)) {
        try {
          claimed = await this.claimAndLaunch(room)
        } catch (err) {
          this.opts.logger?.error({ err }, 'webhook claim failed; retrying')
        }
      }
      if (claimed === 0 || this.concurrency - this.inFlight < Math.ceil(this.concurrency / 2)) {
        await this.wakeup.sleep(this.inFlight > 0 ? this.flushMs : this.pollMs)
      }
    }
    this.flushWakeup.kick()
  }

  /** Logs finished attempts and settles their rows, in batches, beside the calls. */
  private async flushLoop(): Promise<void> {
    while (!this.stopped || this.inFlight > 0 || this.finished.length > 0) {
      if (this.finished.length > 0) {
        try {
          await this.flush()
        } catch (err) {
          this.opts.logger?.error({ err }, 'logging webhook attempts failed; retrying')
        }
      }
      await this.flushWakeup.sleep(this.flushMs)
    }
  }

  /** Where a row goes and what signs it: the carrier's or the organization webhook's, by target. */
  private endpoint(n: DueNotification): Promise<Endpoint> {
    return n.target === 'webhook' ? webhookEndpoint(this.platform, n.webhook_id) : carrierEndpoint(this.platform, n.carrier_id)
  }

  private async claimAndLaunch(room: number): Promise<number> {
    const due = await claimDue(this.platform.db, room, LEASE_MS)
    if (due.length === 0) return 0
    const keyOf = (d: DueNotification) => `${d.target}:${d.carrier_id ?? d.webhook_id}`
    const first = new Map<string, DueNotification>()
    for (const d of due) if (!first.has(keyOf(d))) first.set(keyOf(d), d)
    const endpoints = new Map(await Promise.all([...first].map(async ([key, d]) => [key, await this.endpoint(d)] as const)))
    // The latest checkpoint goes out with every webhook; a failure to read it delays no webhook.
    const audit = await this.checkpoints.headersFor(due.flatMap((d) => (d.source_event_id ? [d.source_event_id] : [])))
      .catch((err: unknown) => { this.opts.logger?.warn?.({ err }, 'reading the audit checkpoint for webhooks failed'); return () => ({}) })
    for (const n of due) {
      const c = endpoints.get(keyOf(n))!
      this.inFlight++
      this.leased.add(n.id)
      void this.send(n, c, audit(n.source_event_id)).then((result) => {
        this.inFlight--
        const delivered = result.statusCode >= 200 && result.statusCode < 300 && !result.error
        this.platform.metrics.webhookDelivery(n.target, delivered ? 'delivered' : 'failed')
        if (!delivered) this.logFailure(n, c, result)
        this.finished.push(result)
        // Half the pipeline free again: claim more now rather than at the next poll.
        if (this.concurrency - this.inFlight === Math.ceil(this.concurrency / 2)) this.wakeup.kick()
        if (this.inFlight === 0) { this.wakeup.kick(); this.flushWakeup.kick() }
      })
    }
    return due.length
  }

  private wakeAt(at: number): void {
    if (this.stopped || (this.retryWake && this.retryWake.at <= at)) return
    if (this.retryWake) clearTimeout(this.retryWake.timer)
    const timer = setTimeout(() => { this.retryWake = undefined; this.kick() }, Math.max(0, at - Date.now()))
    timer.unref()
    this.retryWake = { at, timer }
  }

  /** Where whoever runs the server sees it: which webhook, where to, why, and what happens next. */
  private logFailure(n: DueNotification, c: Endpoint, result: AttemptResult): void {
    const retryInMs = this.platform.config.webhookRetryDelaysMs[result.roundAttempt - 1]
    let host: string | null = null
    try { host = c.url ? new URL(c.url).host : null } catch { /* kept null */ }
    this.opts.logger?.warn?.({
      webhook_id: n.id, target: n.target, to: host, attempt: result.attempt, status_code: result.statusCode || null, error: result.error,
      ...(retryInMs === undefined ? { gave_up: true } : { retry_in_ms: retryInMs }),
    }, retryInMs === undefined ? 'webhook delivery failed; no retries left (redeliver it by hand)' : 'webhook attempt failed; retrying later')
  }

  private async flush(): Promise<void> {
    const batch = this.finished
    this.finished = []
    try {
      await recordAttempts(this.platform.db, batch, this.platform.config.webhookRetryDelaysMs)
      for (const r of batch) this.leased.delete(r.id)
      for (const r of batch) {
        const delay = r.statusCode >= 200 && r.statusCode < 300 ? undefined : this.platform.config.webhookRetryDelaysMs[r.roundAttempt - 1]
        if (delay !== undefined) this.wakeAt(Date.now() + delay)
      }
    } catch (err) {
      // Kept for the next flush; if this process dies first, the leases lapse and the calls repeat.
      this.finished.push(...batch)
      throw err
    }
  }

  /** One call; never throws (postJson reports every failure as status 0). */
  private async send(n: DueNotification, { url, secrets, noUrl, noSecret }: Endpoint, audit: AuditHeaders = {}): Promise<AttemptResult> {
    const attemptedAt = new Date()
    const base = { id: n.id, attempt: n.attempts + 1, roundAttempt: n.round_attempts + 1, attemptedAt }
    if (!url) return { ...base, statusCode: 0, latencyMs: 0, error: noUrl, excerpt: null }
    if (secrets.length === 0) return { ...base, statusCode: 0, latencyMs: 0, error: noSecret, excerpt: null }
    // The call continues the source event's trace (its traceparent goes out with the request).
    const span = startSpan(`webhook POST ${n.target}`, n.traceparent ?? undefined, { kind: SpanKind.CLIENT, attributes: { 'webhook.id': n.id, 'webhook.attempt': base.attempt } })
    try {
      const traceparent = traceparentOfSpan(span)
      const headers = { ...signHeaders(secrets, n.id, attemptedAt, n.payload), ...audit, ...(traceparent ? { traceparent } : {}) }
      const res = await postJson(url, n.payload, headers, { timeoutMs: this.platform.config.webhookTimeoutMs, allowPrivate: this.platform.config.allowPrivateUrls, maxBodyBytes: EXCERPT })
      const ok = res.status >= 200 && res.status < 300
      span?.setAttribute('http.response.status_code', res.status)
      if (!ok) span?.setStatus({ code: SpanStatusCode.ERROR })
      return { ...base, statusCode: res.status, latencyMs: res.latencyMs, error: res.error ?? (ok ? null : `HTTP ${res.status}`), excerpt: res.body ? res.body.slice(0, EXCERPT) : null }
    } catch (err) {
      span?.setStatus({ code: SpanStatusCode.ERROR })
      return { ...base, statusCode: 0, latencyMs: 0, error: messageOf(err), excerpt: null }
    } finally {
      span?.end()
    }
  }
}
