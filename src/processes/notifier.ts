import { type Kysely, sql } from 'kysely'
import { Wakeup } from '../infrastructure/bus/wakeup.js'
import type { Platform } from '../platform.js'
import { WebhookDispatcher, type DispatcherOptions } from '../notifications/dispatcher.js'
import { enqueueFromEvents } from '../notifications/outbox.js'
import { NOTIFIED_EVENTS } from '../notifications/notification-events.js'

export interface NotifierOptions extends DispatcherOptions {
  /** Checkpoint name; one active reader per name across processes. Default `carrier-notifications`. */
  name?: string
  readBatchSize?: number
  readPollMs?: number
}

const lockKey = (name: string) => sql`hashtextextended(${`notifier:${name}`}, 0)`

/**
 * The notifier (DESIGN §1, §3.6): reads the event log from its own checkpoint and turns shipment
 * events into rows of the webhook outbox (and expiry timers), in the transaction that moves the
 * checkpoint (exactly once, single writer through an advisory lock, compare-and-set); its
 * dispatcher then delivers them with retries. Everything lives in the database, so a restart
 * resumes where it stopped and loses nothing.
 */
export class Notifier {
  readonly dispatcher: WebhookDispatcher
  private readonly name: string
  private readonly wakeup = new Wakeup()
  private stopped = true
  private done: Promise<void> = Promise.resolve()
  private unsubscribe: (() => void) | undefined

  constructor(private readonly platform: Platform, private readonly opts: NotifierOptions = {}) {
    this.name = opts.name ?? 'carrier-notifications'
    this.dispatcher = new WebhookDispatcher(platform, opts)
  }

  start(): void {
    if (!this.stopped) return
    this.stopped = false
    this.unsubscribe = this.platform.store.onAppended(() => this.wakeup.kick())
    this.done = this.loop()
    this.dispatcher.start()
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.unsubscribe?.()
    this.wakeup.kick()
    await Promise.all([this.done, this.dispatcher.stop()])
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let more = false
      try {
        more = await this.step()
      } catch (err) {
        this.opts.logger?.error({ err }, 'notifier read failed; retrying')
      }
      if (!more) await this.wakeup.sleep(this.opts.readPollMs ?? 500)
    }
  }

  /** One batch of the log. True when it moved (there may be more). */
  async step(): Promise<boolean> {
    const db = this.platform.db as Kysely<any>
    const store = this.platform.store
    const row = await sql<{ checkpoint: string }>`select checkpoint from notifier_checkpoints where name = ${this.name}`.execute(db)
    let from = row.rows[0]?.checkpoint
    if (from === undefined) {
      await sql`insert into notifier_checkpoints (name, checkpoint) values (${this.name}, ${store.startPosition}) on conflict do nothing`.execute(db)
      from = store.startPosition
    }
    const { events, checkpoint } = await store.readAll(from, this.opts.readBatchSize ?? 500)
    if (events.length === 0) return false
    const wanted = events.filter((e) => e.type in NOTIFIED_EVENTS)
    let created = 0
    const moved = await db.transaction().execute(async (trx) => {
      const locked = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${lockKey(this.name)}) as ok`.execute(trx)
      if (!locked.rows[0]?.ok) return false
      const cas = await sql`update notifier_checkpoints set checkpoint = ${checkpoint}, updated_at = now() where name = ${this.name} and checkpoint = ${from}`.execute(trx)
      if (Number(cas.numAffectedRows ?? 0) !== 1) return false
      created = await enqueueFromEvents(trx, wanted, this.platform.config.shipmentExpiryHours)
      return true
    })
    if (created > 0) this.dispatcher.kick()
    return moved
  }
}
