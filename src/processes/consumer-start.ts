import type { Database } from '../infrastructure/database/database.js'
import { type Kysely, sql } from 'kysely'
import { BUS_HEADERS, type Delivery, type Handler } from '../infrastructure/bus/bus.js'
import type { EventStore } from '../infrastructure/event-store/event-store.js'
import { textOf } from '../infrastructure/event-store/payload.js'

/**
 * Where an event consumer began: events at or before this position were in the log before the
 * consumer existed and are acknowledged without effect (a first deployment onto existing history
 * must not notify carriers of past shipments). `null`: from the beginning, nothing is skipped.
 */
export type StartPosition = string | null

type Positions = Pick<EventStore, 'comparePositions'>

/**
 * The consumer's start position, fixed at its first start to the head of the log and never moved
 * by a restart (one insert that does nothing when the row exists), so a restarted consumer keeps
 * every event that arrived while it was down. Two processes starting at once agree: the second
 * insert waits for the first and the read after it sees the winner's row. An append whose
 * transaction is open across the first start may fall on either side.
 */
export async function startPositionOf(
  db: Kysely<Database>, store: Pick<EventStore, 'headPosition' | 'comparePositions' | 'startPosition'>, consumer: string,
): Promise<StartPosition> {
  const head = await store.headPosition()
  // An empty log: everything is new, which is what null says without a comparison per delivery.
  const position = store.comparePositions(head, store.startPosition) === 0 ? null : head
  await sql`insert into bus_consumer_start_positions (consumer, position) values (${consumer}, ${position})
            on conflict (consumer) do nothing`.execute(db)
  return (await readStartPosition(db, consumer))!.position
}

/** The row, or undefined for a consumer that never started. */
export async function readStartPosition(db: Kysely<Database>, consumer: string): Promise<{ position: StartPosition } | undefined> {
  const r = await sql<{ position: string | null }>`
    select position from bus_consumer_start_positions where consumer = ${consumer}`.execute(db)
  return r.rows[0]
}

/**
 * Moves the start position back to `to` if it is still `from` (the replay, once it has published
 * the events in between). False when another replay moved it meanwhile.
 */
export async function moveStartPosition(db: Kysely<Database>, consumer: string, from: StartPosition, to: StartPosition): Promise<boolean> {
  const r = await sql`
    update bus_consumer_start_positions set position = ${to}, updated_at = now()
    where consumer = ${consumer} and position is not distinct from ${from}`.execute(db)
  return Number(r.numAffectedRows ?? 0) === 1
}

/**
 * True when a relayed event was in the log before the consumer started (see StartPosition). A
 * position this store cannot read (a message made by hand) is not skipped: skipping must be sure.
 */
export function isBeforeStart(positions: Positions, start: StartPosition, position: string): boolean {
  if (start === null) return false
  try {
    return positions.comparePositions(position, start) <= 0
  } catch {
    return false
  }
}

/**
 * Wraps an event consumer's handler: a relayed event at or before the start position is
 * acknowledged without calling it. A copy sent by a replay (dead letters, `cli replay`) is an
 * operator's explicit request and always goes through.
 */
export function fromStartPosition<T>(positions: Positions, start: StartPosition, handler: Handler<T>): Handler<T> {
  if (start === null) return handler
  return (delivery: Delivery<T>) => {
    const position = textOf(delivery.data, 'position')
    if (delivery.headers[BUS_HEADERS.replayOf] === undefined && typeof position === 'string' && isBeforeStart(positions, start, position)) return
    return handler(delivery)
  }
}

/** startPositionOf() and fromStartPosition() together: what an event consumer wraps its handler in before subscribing. */
export async function handlerFromFirstStart<T>(db: Kysely<Database>, store: EventStore, consumer: string, handler: Handler<T>): Promise<Handler<T>> {
  return fromStartPosition(store, await startPositionOf(db, store, consumer), handler)
}
