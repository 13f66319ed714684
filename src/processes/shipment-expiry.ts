import { type Kysely, sql } from 'kysely'
import { Wakeup } from '../infrastructure/bus/wakeup.js'
import type { Platform } from '../platform.js'
import { handleCommand } from '../shared/command-handler.js'
import { shipmentDecider, shipmentStream } from '../shipments/shipment.js'

export interface ShipmentExpiryOptions {
  pollMs?: number
  batchSize?: number
  /** A process that dies while expiring leaves the timer to another after this. Default 30 s. */
  leaseMs?: number
  logger?: { error(obj: object, msg: string): void }
}

/**
 * Fires the expiry timers the notifier sets at ShipmentCreated (created_at + SHIPMENT_EXPIRY_HOURS):
 * each due one sends the shipment aggregate's ExpireShipment command, which appends `ShipmentExpired`
 * only if the shipment is still open and not ready (so a late or repeated firing is harmless).
 * Timers are claimed with SKIP LOCKED and a lease, so several processes can run this.
 */
export class ShipmentExpiry {
  private readonly wakeup = new Wakeup()
  private stopped = true
  private done: Promise<void> = Promise.resolve()

  constructor(private readonly platform: Platform, private readonly opts: ShipmentExpiryOptions = {}) {}

  start(): void {
    if (!this.stopped) return
    this.stopped = false
    this.done = this.loop()
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.wakeup.kick()
    await this.done
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let fired = 0
      try {
        fired = await this.runOnce()
      } catch (err) {
        this.opts.logger?.error({ err }, 'shipment expiry failed; retrying')
      }
      if (fired === 0) await this.wakeup.sleep(this.opts.pollMs ?? 1000)
    }
  }

  async runOnce(): Promise<number> {
    const db = this.platform.db as Kysely<any>
    const leaseMs = this.opts.leaseMs ?? 30_000
    const due = await sql<{ shipment_id: string | number }>`
      update shipment_expiry_timers t set leased_until = clock_timestamp() + make_interval(secs => ${leaseMs / 1000}::float8), attempts = t.attempts + 1
      where t.shipment_id in (
        select shipment_id from shipment_expiry_timers
        where fire_at <= ${this.platform.clock().toISOString()}::timestamptz and (leased_until is null or leased_until < clock_timestamp())
        order by fire_at limit ${this.opts.batchSize ?? 50} for update skip locked)
      returning t.shipment_id`.execute(db)
    for (const { shipment_id } of due.rows) {
      const id = Number(shipment_id)
      try {
        const now = this.platform.clock()
        await handleCommand(this.platform.commands, shipmentStream(id), shipmentDecider, {
          type: 'ExpireShipment', data: { now: now.toISOString(), expiry_hours: this.platform.config.shipmentExpiryHours },
        }, { now, actor: { kind: 'system', id: 'shipment-expiry' } })
        await sql`delete from shipment_expiry_timers where shipment_id = ${id}`.execute(db)
      } catch (err) {
        await sql`update shipment_expiry_timers set last_error = ${String((err as Error).message ?? err).slice(0, 2000)} where shipment_id = ${id}`.execute(db)
        this.opts.logger?.error({ err, shipment_id: id }, 'expiring a shipment failed; will retry after the lease')
      }
    }
    return due.rows.length
  }
}
