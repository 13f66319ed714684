/**
 * The server-sent event streams a hub holds open, and its retry timers: `endAll` ends them all at
 * shutdown (clients reconnect with their Last-Event-ID).
 */
export class OpenStreams {
  private readonly streams = new Set<() => void>()
  private readonly timers = new Set<NodeJS.Timeout>()

  /** Keeps an open stream's closer, so `endAll` can end it. Returns what forgets it. */
  track(close: () => void): () => void {
    this.streams.add(close)
    return () => { this.streams.delete(close) }
  }

  /** Runs `fn` after `ms` (an unref'd timer), unless `endAll` comes first. */
  later(ms: number, fn: () => void): void {
    const t = setTimeout(() => { this.timers.delete(t); fn() }, ms)
    t.unref()
    this.timers.add(t)
  }

  /** Ends every open stream and cancels the timers. */
  endAll(): void {
    for (const close of [...this.streams]) close()
    for (const t of this.timers) clearTimeout(t)
    this.timers.clear()
  }
}
