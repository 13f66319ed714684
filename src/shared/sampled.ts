import { messageOf } from './thrown.js'
import { settlesWithin } from './wakeup.js'

/** A probe's latest outcome: its value, or why there is none; `at` is when it was taken (ms since the epoch). */
export type Reading<T> =
  | { ok: true; value: T; at: number }
  | { ok: false; error: string; at: number; lastOk: { value: T; at: number } | undefined; timedOut?: true }

/**
 * The latest result of a probe that may hang (a query to a database that went away, a request to
 * a NATS node that died), kept so that a reader never waits on it for long: `read(waitMs)` starts a
 * probe unless a recent enough one exists, waits for it at most `waitMs`, and returns the latest
 * reading (the previous one, with its time, while a slow probe is still within its timeout). One
 * probe runs at a time; one that has not answered within `timeoutMs` reads as an error and is given
 * up (its late answer is kept only if nothing newer came meanwhile).
 */
export class Sampled<T> {
  private latest: Reading<T> | undefined
  private lastOk: { value: T; at: number } | undefined
  private running: { startedAt: number; done: Promise<void> } | undefined
  /** Start time of the probe whose outcome `latest` holds. */
  private latestStartedAt = 0

  constructor(
    private readonly probe: () => Promise<T>,
    private readonly opts: {
      /** A probe unanswered after this long counts as failed. */
      timeoutMs: number
      /** A reading younger than this is returned as it is, without a new probe. Default 0. */
      freshMs?: number
    },
  ) {}

  /** Starts a probe unless one is running (and not yet given up) or the latest reading is fresh. */
  refresh(): Promise<void> {
    const now = Date.now()
    if (this.running && now - this.running.startedAt < this.opts.timeoutMs) return this.running.done
    // Given up: its failure is the latest reading until the next probe answers.
    if (this.running) this.record(this.running.startedAt, this.current())
    if (!this.running && this.latest && now - this.latest.at < (this.opts.freshMs ?? 0)) return Promise.resolve()
    const startedAt = now
    const settle = (r: Reading<T>) => {
      if (this.running?.startedAt === startedAt) this.running = undefined
      this.record(startedAt, r)
    }
    const done = Promise.resolve().then(this.probe).then(
      (value) => {
        this.lastOk = { value, at: Date.now() }
        settle({ ok: true, value, at: this.lastOk.at })
      },
      (err) => settle({ ok: false, error: messageOf(err), at: Date.now(), lastOk: this.lastOk }),
    )
    this.running = { startedAt, done }
    return done
  }

  /** Keeps `r` unless a probe started later already gave its reading (a given-up probe answering late). */
  private record(startedAt: number, r: Reading<T>): void {
    if (startedAt < this.latestStartedAt) return
    this.latestStartedAt = startedAt
    this.latest = r
  }

  /** The latest reading after waiting up to `waitMs` for a probe (started now unless the latest is fresh). */
  async read(waitMs: number): Promise<Reading<T>> {
    await settlesWithin(this.refresh(), Math.min(waitMs, this.opts.timeoutMs))
    return this.current()
  }

  /** The latest reading without waiting: a probe running past its timeout reads as its failure. */
  current(): Reading<T> {
    const now = Date.now()
    if (this.running && now - this.running.startedAt >= this.opts.timeoutMs) {
      return { ok: false, error: `no answer within ${this.opts.timeoutMs} ms`, at: this.running.startedAt + this.opts.timeoutMs, lastOk: this.lastOk, timedOut: true }
    }
    return this.latest ?? { ok: false, error: `no answer yet (asked ${now - (this.running?.startedAt ?? now)} ms ago)`, at: now, lastOk: undefined }
  }
}
