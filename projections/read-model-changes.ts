import { type ChangeNotice, decodeChangeNotice, READ_MODEL_CHANGED_CHANNEL } from './change-notices.js'

export type Listen = (channel: string, onNotify: (payload: string) => void) => Promise<() => Promise<void>>

/** What a cache does with the runner's change notices. */
export interface ChangeSubscriber {
  /** A round of this process's runner, before its commit; `changed` with it as `announced` follows once. */
  changing(n: ChangeNotice): void
  /**
   * A committed round (its NOTIFY, from any process). `announced` is this process's own notice of
   * that round, when it announced it; also given, with `n` the same, when its NOTIFY never came
   * within `unsettledMs` (lost while LISTEN reconnected, or the round rolled back).
   */
  changed(n: ChangeNotice, announced: ChangeNotice | undefined): void
}

export const UNSETTLED_MS = 10_000

/**
 * The notices of one process, one per platform: the runner announces its rounds here, the NOTIFYs
 * of every process's rounds arrive here (one LISTEN, opened at the first subscription), and the
 * subscribers hear both. Rounds announced here whose NOTIFY has not arrived are "unsettled".
 */
export class ReadModelChanges {
  private readonly subscribers = new Set<ChangeSubscriber>()
  private readonly unsettled = new Map<string, { notice: ChangeNotice; timer: NodeJS.Timeout }>()
  private listening: Promise<() => Promise<void>> | undefined

  constructor(private readonly listen: Listen | undefined, private readonly unsettledMs = UNSETTLED_MS) {}

  /** Resolves once NOTIFYs are heard; the returned function unsubscribes. */
  async subscribe(s: ChangeSubscriber): Promise<() => void> {
    this.subscribers.add(s)
    if (this.listen) await (this.listening ??= this.listen(READ_MODEL_CHANGED_CHANNEL, (p) => this.received(p)))
    return () => { this.subscribers.delete(s) }
  }

  /** The runner's in-process notice of a round, before its commit. */
  announce(n: ChangeNotice): void {
    if (this.unsettled.has(n.batch)) return
    const timer = setTimeout(() => this.settle(n.batch, n), this.unsettledMs)
    timer.unref()
    this.unsettled.set(n.batch, { notice: n, timer })
    for (const s of this.subscribers) s.changing(n)
  }

  /** A NOTIFY payload (the LISTEN connection's callback). */
  received(payload: string): void {
    this.settle(undefined, decodeChangeNotice(payload))
  }

  private settle(batch: string | undefined, n: ChangeNotice): void {
    const own = this.unsettled.get(batch ?? n.batch)
    if (own) {
      clearTimeout(own.timer)
      this.unsettled.delete(own.notice.batch)
    }
    for (const s of this.subscribers) s.changed(n, own?.notice)
  }

  async close(): Promise<void> {
    for (const u of this.unsettled.values()) clearTimeout(u.timer)
    this.unsettled.clear()
    this.subscribers.clear()
    const listening = this.listening
    this.listening = undefined
    if (listening) await (await listening)()
  }
}
