import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import { type Bus, BUS_HEADERS, type OutgoingMessage } from '../infrastructure/bus/bus.js'
import { subjectMatches } from '../infrastructure/bus/subjects.js'
import type { EventStore, RecordedEvent } from '../infrastructure/event-store/event-store.js'
import { moveStartPosition, readStartPosition, type StartPosition } from '../processes/consumer-start.js'
import { EVENT_CONSUMERS } from '../processes/event-consumers.js'
import { eventMessage, eventSubject } from '../processes/relay.js'
import { ReplayRefused } from './replay-refused.js'

export { ReplayRefused }

export interface ReplayRequest {
  db: Kysely<any>
  store: EventStore
  bus: Bus
  consumer: string
  /** Deliver the events after this position; `start` for the whole log. */
  after: string
  batchSize?: number
}

export interface ReplayPlan {
  consumer: string
  after: string
  /** The consumer's start position: the events it skipped end here. */
  through: StartPosition
  /** Events in (after, through] on the consumer's subjects: what the replay delivers. */
  count: number
}

const START_WORD = 'start'

/** The subjects of an event consumer; refused for any other name. */
export function eventConsumerSubjects(consumer: string): readonly string[] {
  const subjects = EVENT_CONSUMERS[consumer]
  if (!subjects) throw new ReplayRefused(`unknown consumer "${consumer}"; event consumers: ${Object.keys(EVENT_CONSUMERS).join(', ')}`)
  return subjects
}

/**
 * What a replay would deliver: the events a consumer skipped at its first start (it began at the
 * head of the log) after `after`. Events after its start position went to it the ordinary way
 * and are not sent again.
 */
export async function planReplay(r: ReplayRequest): Promise<ReplayPlan> {
  const subjects = eventConsumerSubjects(r.consumer)
  const after = r.after === START_WORD ? r.store.startPosition : r.after
  try {
    r.store.comparePositions(after, r.store.startPosition)
  } catch {
    throw new ReplayRefused(`"${r.after}" is not a position of this event log (or "${START_WORD}")`)
  }
  const row = await readStartPosition(r.db, r.consumer)
  const known = (await r.bus.consumerStats()).some((c) => c.name === r.consumer)
  if (!row || !known) {
    throw new ReplayRefused(`consumer "${r.consumer}" has not started yet: at its first start it begins at the head of the log; replay after that`)
  }
  let count = 0
  await eachSkipped(r, after, row.position, subjects, async (events) => { count += events.length })
  return { consumer: r.consumer, after, through: row.position, count }
}

/**
 * Sends the planned events to the consumer only, as replay copies that keep the event id (an
 * idempotent consumer skips one it handled), then moves its start position back to `after`, so
 * the same request again has nothing left to deliver. Interrupted, it can simply be run again.
 */
export async function runReplay(
  r: ReplayRequest, plan: ReplayPlan, onProgress: (delivered: number) => void = () => {},
): Promise<{ delivered: number; startMoved: boolean }> {
  const subjects = eventConsumerSubjects(plan.consumer)
  // Fresh transport ids: the bus must not drop the copies as repeats of the relayed messages.
  const run = randomBytes(4).toString('hex')
  let delivered = 0
  await eachSkipped(r, plan.after, plan.through, subjects, async (events) => {
    const copies: OutgoingMessage[] = events.map((e) => ({
      ...eventMessage(e), id: `${e.id}#replay-${run}`, headers: { [BUS_HEADERS.replayOf]: e.id }, onlyFor: plan.consumer,
    }))
    await r.bus.publish(copies)
    delivered += copies.length
    onProgress(delivered)
  })
  const to = r.store.comparePositions(plan.after, r.store.startPosition) === 0 ? null : plan.after
  const startMoved = delivered === 0 ? false : await moveStartPosition(r.db, plan.consumer, plan.through, to)
  return { delivered, startMoved }
}

/** The consumer's events in (after, through], batch by batch, through the event-store port. */
async function eachSkipped(
  r: ReplayRequest, after: string, through: StartPosition, subjects: readonly string[], each: (events: RecordedEvent[]) => Promise<void>,
): Promise<void> {
  if (through === null || r.store.comparePositions(after, through) >= 0) return
  const wanted = (e: RecordedEvent) => subjects.some((p) => subjectMatches(p, eventSubject(e)))
  let hiddenSince: number | undefined
  for (let from = after; r.store.comparePositions(from, through) < 0;) {
    const { events, checkpoint } = await r.store.readAll(from, r.batchSize ?? 1000)
    if (events.length === 0) {
      // `through` is an event's position, so there is more: a transaction open elsewhere hides it
      // for now (the log is read below the oldest open transaction, DESIGN §2).
      hiddenSince ??= Date.now()
      if (Date.now() - hiddenSince > HIDDEN_WAIT_MS) throw new Error(`the log is not readable up to ${through} yet: a long transaction is open`)
      await new Promise((resolve) => setTimeout(resolve, 50))
      continue
    }
    hiddenSince = undefined
    const batch = events.filter((e) => r.store.comparePositions(e.position, through) <= 0 && wanted(e))
    if (batch.length > 0) await each(batch)
    from = checkpoint
  }
}

const HIDDEN_WAIT_MS = 30_000
