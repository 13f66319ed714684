import { messageOf } from '../../shared/thrown.js'

/** How this process's latest publishes went (for /ready): kept in memory, read without a round trip. */
export interface PublishHealth {
  /** When the current run of failed publishes began; undefined while the latest publish succeeded. */
  failingSince: Date | undefined
  /** The latest failure's message, while failing. */
  error: string | undefined
  lastSuccessAt: Date | undefined
}

/** Records each publish's outcome for `Bus.publishHealth`; both adapters keep one. */
export class PublishHealthRecorder {
  private failingSince: number | undefined
  private error: string | undefined
  private lastSuccessAt: number | undefined

  succeeded(): void {
    this.failingSince = undefined
    this.error = undefined
    this.lastSuccessAt = Date.now()
  }

  failed(err: unknown): void {
    this.failingSince ??= Date.now()
    this.error = messageOf(err)
  }

  /** Records the outcome of `p` and passes it on. */
  async track<T>(p: Promise<T>): Promise<T> {
    try {
      const value = await p
      this.succeeded()
      return value
    } catch (err) {
      this.failed(err)
      throw err
    }
  }

  get state(): PublishHealth {
    return {
      failingSince: this.failingSince === undefined ? undefined : new Date(this.failingSince),
      error: this.error,
      lastSuccessAt: this.lastSuccessAt === undefined ? undefined : new Date(this.lastSuccessAt),
    }
  }
}
