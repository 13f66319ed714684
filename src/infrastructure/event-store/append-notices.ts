import { type Kysely, sql } from 'kysely'

/** The channel the PostgreSQL store's readers in other processes listen on. */
export const APPENDED_CHANNEL = 'es_appended'
/** Other processes hear of new events at most this late (see AppendNotices). */
const NOTIFY_INTERVAL_MS = 3

/**
 * The port through which the PostgreSQL store wakes readers in other processes (their projectors
 * and relays) after a commit that appended. This process's own readers are woken by the store.
 */
export interface OtherReaders {
  /** `head`: the position of the newest event appended, sent along so readers need not ask for it. */
  appended(head?: string): void
  close(): void
}

/**
 * NOTIFY on `APPENDED_CHANNEL`, sent on its own, not inside the append: a transaction that
 * notifies holds a global lock through its commit (and WAL flush), which serialises concurrent
 * appends. At most one per NOTIFY_INTERVAL_MS (the first at once, then one at the end of the
 * interval for whatever came meanwhile): a NOTIFY per append cost a fifth of a lone writer's append
 * rate. Listeners read everything committed before the notification, and poll as a fallback anyway.
 *
 * None at all while a part of this process that knows it says nobody elsewhere needs one
 * (`coveredBy`): the background, while its relay holds the lease and its projector runs, publishes
 * and projects this process's appends itself, and a NOTIFY would only send other processes'
 * projectors racing for the same rounds.
 */
export class AppendNotices implements OtherReaders {
  private readonly covers = new Set<() => boolean>()
  private timer: NodeJS.Timeout | undefined
  private again = false
  /** The newest position appended since the last NOTIFY (appends arrive in about commit order; the newest one wins). */
  private head: string | undefined

  constructor(private readonly db: Kysely<any>) {}

  /** While `covered()` holds, no NOTIFY is sent. Returns the function that ends it. */
  coveredBy(covered: () => boolean): () => void {
    this.covers.add(covered)
    return () => { this.covers.delete(covered) }
  }

  appended(head?: string): void {
    for (const covered of this.covers) if (covered()) return
    if (head !== undefined) this.head = head
    if (this.timer) { this.again = true; return }
    this.again = false
    const payload = this.head ?? ''
    this.head = undefined
    void sql`select pg_notify(${APPENDED_CHANNEL}, ${payload})`.execute(this.db).catch(() => undefined)
    this.timer = setTimeout(() => {
      this.timer = undefined
      if (this.again) this.appended()
    }, NOTIFY_INTERVAL_MS)
    this.timer.unref()
  }

  close(): void {
    clearTimeout(this.timer)
    this.timer = undefined
  }
}
