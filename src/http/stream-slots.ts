import { HttpError } from './http-error.js'

/** How long a refused stream is asked to wait: a slot frees when another stream closes, at no known time. */
export const STREAM_RETRY_AFTER_SECONDS = 10

export class TooManyStreams extends HttpError {
  readonly retryAfter = STREAM_RETRY_AFTER_SECONDS
  constructor(scope: 'address' | 'process', cap: number) {
    super(429, 'too_many_streams', scope === 'address'
      ? `Too many open event streams from this address (at most ${cap}); close one, or retry after the time in Retry-After.`
      : 'This server holds as many open event streams as it takes; retry after the time in Retry-After.')
  }
}

/**
 * The open server-sent event streams of this process, counted per client address and in all: each
 * stream holds a slot from before its answer is written until it closes, whatever closes it (the
 * client, the server, a slow reader, shutdown). Counted here, not in the database: a stream lives
 * and dies with its process, so each process caps its own (DESIGN §5 keeps shared state for limits
 * that must be exact across processes; this one bounds one process's memory and sockets).
 */
export class StreamSlots {
  private readonly byAddress = new Map<string, number>()
  private total = 0

  /** `perAddress`, `perProcess`: 0 is no cap. */
  constructor(private readonly perAddress: number, private readonly perProcess: number) {}

  /** Takes a slot for a stream of `address` (a client key); returns what gives it back, once. Throws TooManyStreams at a cap. */
  take(address: string): () => void {
    if (this.perProcess > 0 && this.total >= this.perProcess) throw new TooManyStreams('process', this.perProcess)
    const held = this.byAddress.get(address) ?? 0
    if (this.perAddress > 0 && held >= this.perAddress) throw new TooManyStreams('address', this.perAddress)
    this.byAddress.set(address, held + 1)
    this.total++
    let given = false
    return () => {
      if (given) return
      given = true
      this.total--
      const left = (this.byAddress.get(address) ?? 1) - 1
      if (left > 0) this.byAddress.set(address, left)
      else this.byAddress.delete(address)
    }
  }

  /** Streams open now, in all. */
  get open(): number { return this.total }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The process's open event streams (buildApp decorates the root with them): every SSE channel takes a slot. */
    streamSlots: StreamSlots
  }
}
