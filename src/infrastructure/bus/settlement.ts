import { type BusLogger, type BusMessage, CONSUMER_DEFAULTS, type ConsumerOptions, type Delivery, type Handler } from './bus.js'
import { stackOf } from '../../shared/thrown.js'
import { isDatabaseUnavailable } from '../../shared/unavailable.js'

export type Settlement =
  | { kind: 'ack' }
  | { kind: 'nak'; delayMs: number; error?: string | undefined }
  | { kind: 'dead'; reason: string; error?: string | undefined }

export interface ResolvedConsumerOptions {
  name: string
  subjects: string[]
  maxDeliveries: number
  retryDelaysMs: number[]
  ackWaitMs: number
  ordered: boolean
  concurrency: number
  startAt: 'all' | 'new'
}

export function resolveConsumerOptions(o: ConsumerOptions, concurrencyDefault: number = CONSUMER_DEFAULTS.concurrency): ResolvedConsumerOptions {
  const maxDeliveries = o.maxDeliveries ?? CONSUMER_DEFAULTS.maxDeliveries
  if (!Number.isInteger(maxDeliveries) || maxDeliveries < 1) throw new Error('maxDeliveries must be a positive integer')
  const retryDelaysMs = o.retryDelaysMs?.length ? o.retryDelaysMs : [...CONSUMER_DEFAULTS.retryDelaysMs]
  if (retryDelaysMs.some((d) => !(d >= 0))) throw new Error('retryDelaysMs must be non-negative')
  if (o.subjects.length === 0) throw new Error('a consumer needs at least one subject')
  return {
    name: o.name,
    subjects: o.subjects,
    maxDeliveries,
    retryDelaysMs,
    ackWaitMs: o.ackWaitMs ?? CONSUMER_DEFAULTS.ackWaitMs,
    ordered: o.ordered ?? false,
    concurrency: Math.max(1, o.concurrency ?? concurrencyDefault),
    startAt: o.startAt ?? 'all',
  }
}

export const retryDelay = (o: ResolvedConsumerOptions, attempt: number): number =>
  o.retryDelaysMs[Math.min(attempt - 1, o.retryDelaysMs.length - 1)] ?? 0

/** How long a handler is retried in place while the database cannot be reached (the adapters keep the delivery in progress meanwhile). */
const OUTAGE_RETRY_MS = 20_000

const errorText = (err: unknown): string => stackOf(err).slice(0, 4000)

/**
 * Runs a handler for one delivery and decides how to settle it; the adapters only carry the
 * decision out. Shared so that both adapters count deliveries and dead-letter the same way.
 */
export async function runHandler(
  message: BusMessage, attempt: number, o: ResolvedConsumerOptions, handler: Handler, logger: BusLogger,
): Promise<Settlement> {
  // Delivered again after the last allowed delivery: that one was never settled (its process died
  // or its ack was lost). The handler does not run again; the message is recorded instead.
  if (attempt > o.maxDeliveries) {
    return { kind: 'dead', reason: 'max_deliveries', error: `not settled within ${o.ackWaitMs} ms on delivery ${attempt - 1}` }
  }
  let decided: Settlement | undefined
  const delivery: Delivery = {
    ...message,
    consumer: o.name,
    attempt,
    maxDeliveries: o.maxDeliveries,
    ack() { decided ??= { kind: 'ack' } },
    nak(delayMs) { decided ??= { kind: 'nak', delayMs: Math.max(0, delayMs ?? retryDelay(o, attempt)) } },
    deadLetter(reason) { decided ??= { kind: 'dead', reason: 'rejected', error: reason } },
  }
  const outageEnds = Date.now() + OUTAGE_RETRY_MS
  for (let wait = 100; ; wait = Math.min(wait * 2, 1000)) {
    try {
      await handler(delivery)
    } catch (err) {
      // The database is down (a restart, a crash): not the message's fault, so it keeps its
      // deliveries and is tried again here, soon after the database answers, instead of waiting out
      // the retry schedule or running into the dead letters. Bounded: a long outage naks as usual.
      if (decided === undefined && isDatabaseUnavailable(err) && Date.now() + wait < outageEnds) {
        logger.warn({ err, consumer: o.name, message_id: message.id, attempt }, 'bus handler: database unavailable; retrying')
        await new Promise((r) => setTimeout(r, wait))
        continue
      }
      decided ??= { kind: 'nak', delayMs: retryDelay(o, attempt), error: errorText(err) }
      logger.warn({ err, consumer: o.name, message_id: message.id, subject: message.subject, attempt }, 'bus handler failed')
    }
    break
  }
  const s = decided ?? { kind: 'ack' }
  if (s.kind === 'nak' && attempt >= o.maxDeliveries) {
    return { kind: 'dead', reason: 'max_deliveries', error: s.error ?? `nak on delivery ${attempt} of ${o.maxDeliveries}` }
  }
  return s
}
