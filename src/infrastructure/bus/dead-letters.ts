import type { Database } from '../database/database.js'
import { type Kysely, sql } from 'kysely'
import { BUS_HEADERS, type Bus, type BusMessage, headersOf } from './bus.js'

/** A message a consumer gave up on. Kept until replayed (and after, marked `replayedAt`). */
export interface DeadLetter {
  id: number
  consumer: string
  messageId: string
  subject: string
  key: string | undefined
  data: unknown
  headers: Record<string, string>
  deliveries: number
  /** `max_deliveries` (retries exhausted) or `rejected` (the handler called deadLetter). */
  reason: string
  error: string | undefined
  publishedAt: Date | undefined
  deadAt: Date
  replayedAt: Date | undefined
}

export interface DeadLetterInput {
  consumer: string
  message: BusMessage
  transportRef: string
  deliveries: number
  reason: string
  error?: string | undefined
}

/** Idempotent per (consumer, transport copy). Pass a transaction to record it with other writes. */
export async function recordDeadLetter(db: Kysely<Database>, d: DeadLetterInput): Promise<void> {
  await sql`
    insert into bus_dead_letters
      (consumer, message_id, transport_ref, subject, ordering_key, data, headers, deliveries, reason, error, published_at)
    values (${d.consumer}, ${d.message.id}, ${d.transportRef}, ${d.message.subject}, ${d.message.key ?? null},
      ${JSON.stringify(d.message.data ?? null)}::jsonb, ${JSON.stringify(d.message.headers)}::jsonb, ${d.deliveries},
      ${d.reason}, ${d.error ?? null}, ${d.message.publishedAt.toISOString()}::timestamptz)
    on conflict (consumer, transport_ref) do nothing`.execute(db)
}

interface Row {
  id: number; consumer: string; message_id: string; subject: string; ordering_key: string | null; data: unknown
  headers: unknown; deliveries: number; reason: string; error: string | null; published_at: Date | string | null
  dead_at: Date | string; replayed_at: Date | string | null
}

const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v)
const date = (v: Date | string) => (v instanceof Date ? v : new Date(v))
const toDeadLetter = (r: Row): DeadLetter => ({
  id: Number(r.id),
  consumer: r.consumer,
  messageId: r.message_id,
  subject: r.subject,
  key: r.ordering_key ?? undefined,
  data: parse(r.data),
  headers: headersOf(r.headers),
  deliveries: r.deliveries,
  reason: r.reason,
  error: r.error ?? undefined,
  publishedAt: r.published_at ? date(r.published_at) : undefined,
  deadAt: date(r.dead_at),
  replayedAt: r.replayed_at ? date(r.replayed_at) : undefined,
})

export interface DeadLetterFilter {
  consumer?: string
  ids?: number[]
  /** Include dead letters already replayed. Default false. */
  includeReplayed?: boolean
  limit?: number
}

const where = (f: DeadLetterFilter) => sql`
  ${f.includeReplayed ? sql`true` : sql`replayed_at is null`}
  ${f.consumer !== undefined ? sql`and consumer = ${f.consumer}` : sql``}
  ${f.ids !== undefined ? sql`and id = any(${f.ids}::bigint[])` : sql``}`

export async function listDeadLetters(db: Kysely<Database>, f: DeadLetterFilter = {}): Promise<DeadLetter[]> {
  const r = await sql<Row>`select * from bus_dead_letters where ${where(f)} order by id limit ${f.limit ?? 100}`.execute(db)
  return r.rows.map(toDeadLetter)
}

/** Dead letters not yet replayed, per consumer. */
export async function countDeadLetters(db: Kysely<Database>): Promise<Map<string, number>> {
  const r = await sql<{ consumer: string; n: number }>`
    select consumer, count(*)::int as n from bus_dead_letters where replayed_at is null group by consumer`.execute(db)
  return new Map(r.rows.map((x) => [x.consumer, Number(x.n)]))
}

/**
 * Publishes a copy of each selected dead letter to its consumer only (with fresh deliveries) and
 * marks it replayed. The copy carries the original message id, so an idempotent consumer that
 * did handle it after all skips it. Returns how many were replayed.
 */
export async function replayDeadLetters(db: Kysely<Database>, bus: Bus, f: DeadLetterFilter = {}): Promise<number> {
  let total = 0
  for (;;) {
    const batch = await listDeadLetters(db, { ...f, includeReplayed: false, limit: Math.min(f.limit ?? 500, 500) })
    if (batch.length === 0) return total
    await bus.publish(batch.map((d) => ({
      subject: d.subject,
      id: `${d.messageId}#replay-${d.id}`,
      data: d.data,
      key: d.key,
      headers: { ...d.headers, [BUS_HEADERS.replayOf]: d.messageId },
      onlyFor: d.consumer,
    })))
    await sql`update bus_dead_letters set replayed_at = now() where id = any(${batch.map((d) => d.id)}::bigint[])`.execute(db)
    total += batch.length
    if (f.ids !== undefined || (f.limit !== undefined && total >= f.limit)) return total
  }
}

/** Adds to the cluster-wide redelivery counter of a consumer (for /metrics). */
export async function countRedeliveries(db: Kysely<Database>, consumer: string, n: number): Promise<void> {
  if (n <= 0) return
  await sql`
    insert into bus_consumer_stats (consumer, redeliveries) values (${consumer}, ${n})
    on conflict (consumer) do update set redeliveries = bus_consumer_stats.redeliveries + ${n}, updated_at = now()`.execute(db)
}

export async function redeliveryCounts(db: Kysely<Database>): Promise<Map<string, number>> {
  const r = await sql<{ consumer: string; redeliveries: number }>`select consumer, redeliveries from bus_consumer_stats`.execute(db)
  return new Map(r.rows.map((x) => [x.consumer, Number(x.redeliveries)]))
}
