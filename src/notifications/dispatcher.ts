import { Wakeup } from '../infrastructure/bus/wakeup.js'
import { signingSecrets } from '../carriers/credentials.js'
import type { Platform } from '../platform.js'
import { postJson } from './safe-http.js'
import { signHeaders } from './signing.js'
import { type AttemptResult, claimDue, recordAttempts, type DueNotification } from './outbox.js'

export interface DispatcherOptions {
  /** Notifications claimed and sent at once. Default 200. */
  batchSize?: number
  /** Fallback poll for rows that became due (retries, other processes). Default 250 ms. */
  pollMs?: number
  /** Batches in flight at once, so one batch's database work overlaps another's HTTP calls. Default 2. */
  workers?: number
  logger?: { error(obj: object, msg: string): void }
}

const EXCERPT = 500

// Dispatchers running in this process, so a manual redelivery can wake them instead of waiting for a poll.
const running = new Set<WebhookDispatcher>()
export const kickDispatchers = (): void => { for (const d of running) d.kick() }

/**
 * Sends due webhooks (DESIGN §3.6): signed with every valid secret of the carrier, the URL checked
 * again at send time (DNS rebinding), 2xx within WEBHOOK_TIMEOUT_MS is success, every attempt
 * logged. Any number of processes may run one: rows are claimed with SKIP LOCKED and a lease.
 */
export class WebhookDispatcher {
  private readonly wakeups: Wakeup[]
  private stopped = true
  private done: Promise<void> = Promise.resolve()
  private readonly batchSize: number
  private readonly pollMs: number

  constructor(private readonly platform: Platform, private readonly opts: DispatcherOptions = {}) {
    this.batchSize = opts.batchSize ?? 200
    this.pollMs = opts.pollMs ?? 250
    this.wakeups = Array.from({ length: Math.max(1, opts.workers ?? 2) }, () => new Wakeup())
  }

  start(): void {
    if (!this.stopped) return
    this.stopped = false
    running.add(this)
    this.done = Promise.all(this.wakeups.map((w) => this.loop(w))).then(() => undefined)
  }

  async stop(): Promise<void> {
    this.stopped = true
    running.delete(this)
    this.kick()
    await this.done
  }

  kick(): void { for (const w of this.wakeups) w.kick() }

  private async loop(wakeup: Wakeup): Promise<void> {
    while (!this.stopped) {
      let sent = 0
      try {
        sent = await this.runOnce()
      } catch (err) {
        this.opts.logger?.error({ err }, 'webhook dispatch failed; retrying')
      }
      if (sent < this.batchSize) await wakeup.sleep(this.pollMs)
    }
  }

  /** One batch: claim, send in parallel, record. Returns how many were attempted. */
  async runOnce(): Promise<number> {
    const { config } = this.platform
    // The lease outlives the call's own time-out, so a live dispatcher never loses its rows.
    const due = await claimDue(this.platform.db, this.batchSize, config.webhookTimeoutMs + 10_000)
    if (due.length === 0) return 0
    const carriers = [...new Set(due.map((d) => d.carrier_id))]
    const [urls, secrets] = await Promise.all([
      this.platform.rm.selectFrom('carriers').select(['id', 'notification_url']).where('id', 'in', carriers).execute(),
      Promise.all(carriers.map(async (c) => [c, await signingSecrets(this.platform, c)] as const)),
    ])
    const urlOf = new Map(urls.map((r) => [r.id, r.notification_url]))
    const secretsOf = new Map(secrets)
    const results = await Promise.all(due.map((n) => this.send(n, urlOf.get(n.carrier_id) ?? null, secretsOf.get(n.carrier_id) ?? [])))
    await recordAttempts(this.platform.db, results, config.webhookRetryDelaysMs)
    return due.length
  }

  private async send(n: DueNotification, url: string | null, secrets: string[]): Promise<AttemptResult> {
    const attemptedAt = new Date()
    const base = { id: n.id, attempt: n.attempts + 1, roundAttempt: n.round_attempts + 1, attemptedAt }
    if (!url) return { ...base, statusCode: 0, latencyMs: 0, error: 'the carrier has no notification_url', excerpt: null }
    if (secrets.length === 0) return { ...base, statusCode: 0, latencyMs: 0, error: 'the carrier has no valid hmac secret', excerpt: null }
    const headers = signHeaders(secrets, n.id, attemptedAt, n.payload)
    const res = await postJson(url, n.payload, { ...headers }, { timeoutMs: this.platform.config.webhookTimeoutMs, allowPrivate: this.platform.config.allowPrivateUrls, maxBodyBytes: EXCERPT })
    return { ...base, statusCode: res.status, latencyMs: res.latencyMs, error: res.error ?? (res.status >= 200 && res.status < 300 ? null : `HTTP ${res.status}`), excerpt: res.body ? res.body.slice(0, EXCERPT) : null }
  }
}
