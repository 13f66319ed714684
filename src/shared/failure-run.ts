import type { BusLogger } from '../infrastructure/bus/bus.js'
import { messageOf } from './thrown.js'

/**
 * The log of a run of failures of one retried operation (the relay's batch): the first failure, and
 * each new message in the run, is logged with its error; repeats of the same one are counted,
 * not logged, and the success that ends the run says how long it lasted and how many attempts
 * failed. A NATS leader election fails every publish for seconds; it is three lines, not hundreds.
 */
export class FailureRun {
  private since: number | undefined
  private attempts = 0
  private readonly seen = new Set<string>()

  constructor(
    private readonly logger: BusLogger,
    private readonly context: Record<string, unknown>,
    private readonly failedMsg: string,
    private readonly recoveredMsg: string,
  ) {}

  /** True while the last attempt failed. */
  get failing(): boolean { return this.since !== undefined }

  failed(err: unknown): void {
    this.since ??= Date.now()
    this.attempts++
    const message = messageOf(err)
    if (!this.seen.has(message)) this.logger.error({ err, ...this.context, failed_attempts: this.attempts }, this.failedMsg)
    this.seen.add(message)
  }

  ended(): void {
    if (this.since === undefined) return
    this.logger.warn({ ...this.context, failed_attempts: this.attempts, failing_ms: Date.now() - this.since }, this.recoveredMsg)
    this.since = undefined
    this.attempts = 0
    this.seen.clear()
  }
}
