import type { DatabaseHandle } from '../database/connection.js'
import type { Bus, BusLogger } from './bus.js'
import { InProcessBus, type InProcessBusOptions } from './in-process-bus.js'
import { NatsBus, type NatsBusOptions } from './nats-bus.js'
import { traced } from './traced-bus.js'
import { tracingEnabled } from '../tracing/tracing.js'

export interface CreateBusOptions {
  /** `NATS_URL`: JetStream when set, the in-process bus in `db` otherwise. */
  natsUrl?: string | undefined
  /** Holds dead letters and counters for both adapters, and the whole in-process bus. */
  db: DatabaseHandle
  logger?: BusLogger
  nats?: Omit<NatsBusOptions, 'url' | 'db' | 'logger'>
  inProcess?: Omit<InProcessBusOptions, 'logger'>
}

/** The only place that picks an adapter; everything else holds a `Bus`. */
export async function createBus(o: CreateBusOptions): Promise<Bus> {
  const bus = await adapterOf(o)
  return tracingEnabled() ? traced(bus) : bus
}

async function adapterOf(o: CreateBusOptions): Promise<Bus> {
  if (o.natsUrl) {
    return NatsBus.connect({ ...o.nats, url: o.natsUrl, db: o.db.db, ...(o.logger ? { logger: o.logger } : {}) })
  }
  const bus = new InProcessBus(o.db, { ...o.inProcess, ...(o.logger ? { logger: o.logger } : {}) })
  await bus.start()
  return bus
}
