/**
 * How soon a client whose stream a stopping process ended comes back (the `retry:` it is sent last),
 * spread over a window: behind the proxy it reconnects to another process, and the thousands of
 * streams one process held should not all land there in the same millisecond.
 */
export const DRAIN_RETRY_MS = { min: 250, spread: 1500 }

/** The last frame of a stream a draining process ends: when to reconnect (EventSource obeys it). */
export const drainRetryFrame = (random: () => number = Math.random): string =>
  `retry: ${DRAIN_RETRY_MS.min + Math.floor(random() * DRAIN_RETRY_MS.spread)}\n\n`

/**
 * The shutdown of this process's server-sent event streams, whichever module opened them: `begin`
 * (at `preClose`) ends every open one with a retry hint, and a stream asked for afterwards (a
 * request on a kept-alive socket, served while the process drains) is ended as soon as it opens.
 * Without it a stream holds its socket, and so `app.close()`, until its client leaves.
 */
export class StreamDrain {
  private readonly enders = new Set<() => void>()
  private started = false

  /** The drain has begun: no stream is to stay open. */
  get begun(): boolean { return this.started }

  /** Keeps an open stream's ender until the drain; returns what forgets it (the stream closed first). */
  hold(end: () => void): () => void {
    this.enders.add(end)
    return () => { this.enders.delete(end) }
  }

  /** Ends every open stream (each ender forgets itself); later streams see `begun`. */
  begin(): void {
    this.started = true
    for (const end of [...this.enders]) end()
    this.enders.clear()
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The process's event streams as shutdown ends them (buildApp decorates the root; sse-channel.ts holds each). */
    streamDrain: StreamDrain
  }
}
