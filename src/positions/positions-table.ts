import { type Kysely, sql } from 'kysely'

/** Telemetry of drivers' devices (DESIGN §3.10), table `driver_positions` (infrastructure, not a read model). */

/** Channel of the NOTIFY sent with each stored batch: every process's ETA engine and streams hear it. */
export const POSITIONS_CHANNEL = 'driver_positions'

export interface ReportedPosition {
  lat: number
  lng: number
  recorded_at: string
  accuracy_m?: number | null | undefined
  speed_kmh?: number | null | undefined
  heading?: number | null | undefined
}

/** What the NOTIFY carries: the driver and its newest position of the batch (a stream needs nothing more). */
export interface PositionNotice { organization_id: string; driver_id: string; lat: number; lng: number; recorded_at: string; heading?: number | null }

export interface StoredPosition {
  lat: number
  lng: number
  recorded_at: Date
  received_at: Date
  accuracy_m: number | null
  speed_kmh: number | null
  heading: number | null
}

const floats = (xs: (number | null | undefined)[]) => xs.map((x) => (x === undefined ? null : x))

/**
 * Stores a batch with one statement: the rows go as arrays (one INSERT … unnest, whatever the batch
 * size); once they committed, the NOTIFY follows on its own (notifyPositions). Not in the INSERT's
 * transaction: PostgreSQL serializes the commits of notifying transactions (a lock held through the
 * WAL flush), which capped ingestion at one commit per flush (~140 positions/s on a loaded 2-core
 * machine, test/bench/eta-freshness.bench.ts); a notify-only transaction writes no WAL.
 */
export async function insertPositions(
  db: Kysely<any>, o: { organizationId: string; driverId: string; receivedAt: Date; positions: ReportedPosition[] },
): Promise<number> {
  const ps = o.positions
  const newest = ps.reduce((a, b) => (Date.parse(b.recorded_at) > Date.parse(a.recorded_at) ? b : a))
  const notice: PositionNotice = { organization_id: o.organizationId, driver_id: o.driverId, lat: newest.lat, lng: newest.lng, recorded_at: new Date(newest.recorded_at).toISOString(), heading: newest.heading ?? null }
  const r = await sql<{ n: number }>`
    with stored as (
      insert into driver_positions (organization_id, driver_id, lat, lng, recorded_at, received_at, accuracy_m, speed_kmh, heading)
      select ${o.organizationId}, ${o.driverId}, p.lat, p.lng, p.recorded_at, ${o.receivedAt}::timestamptz, p.accuracy_m, p.speed_kmh, p.heading
      from unnest(${ps.map((p) => p.lat)}::float8[], ${ps.map((p) => p.lng)}::float8[], ${ps.map((p) => p.recorded_at)}::timestamptz[],
                  ${floats(ps.map((p) => p.accuracy_m))}::float4[], ${floats(ps.map((p) => p.speed_kmh))}::float4[], ${floats(ps.map((p) => p.heading))}::float4[])
        as p(lat, lng, recorded_at, accuracy_m, speed_kmh, heading)
      returning 1
    )
    select (select count(*) from stored)::int as n`.execute(db)
  notifyPositions(db, notice)
  return Number(r.rows[0]!.n)
}

/** Per database handle: a NOTIFY in flight, and the newest notice waiting for it to finish. */
const notifiers = new WeakMap<object, { busy: boolean; next: PositionNotice | null }>()

/**
 * Sends `NOTIFY driver_positions` after a commit, coalesced per process: one at a time, and what
 * arrives meanwhile is told by one more (with the newest notice). Listeners treat it as a wake-up
 * (the ETA engine reads the rows), so fewer notifications lose nothing. Never throws: the engine's
 * poll picks up rows whose notification failed.
 */
export function notifyPositions(db: Kysely<any>, notice: PositionNotice): void {
  const state = notifiers.get(db) ?? notifiers.set(db, { busy: false, next: null }).get(db)!
  state.next = notice
  if (state.busy) return
  state.busy = true
  void (async () => {
    while (state.next) {
      const n = state.next
      state.next = null
      await sql`select pg_notify(${POSITIONS_CHANNEL}, ${JSON.stringify(n)})`.execute(db).catch(() => undefined)
    }
    state.busy = false
  })()
}

/** A driver_positions row as the drivers give it (numerics may come as text, times as text or Dates). */
interface PositionColumns {
  lat: number | string; lng: number | string; recorded_at: Date | string; received_at: Date | string
  accuracy_m: number | string | null; speed_kmh: number | string | null; heading: number | string | null
}

const toStored = (r: PositionColumns): StoredPosition => ({
  lat: Number(r.lat), lng: Number(r.lng), recorded_at: new Date(r.recorded_at), received_at: new Date(r.received_at),
  accuracy_m: r.accuracy_m === null ? null : Number(r.accuracy_m), speed_kmh: r.speed_kmh === null ? null : Number(r.speed_kmh),
  heading: r.heading === null ? null : Number(r.heading),
})

/**
 * A driver's positions recorded in [from, to], oldest first (ties by id), in the caller's
 * organization only: one range of the index (driver_id, recorded_at, id), no sort, whatever the
 * table holds (issue 32). `limit` + 1 rows tell whether more follow.
 */
export const driverPositionsQuery = (db: Kysely<any>, organizationId: string, driverId: string, from: Date, to: Date, limit: number) =>
  db.selectFrom('driver_positions').select(['lat', 'lng', 'recorded_at', 'received_at', 'accuracy_m', 'speed_kmh', 'heading'])
    .where('driver_id', '=', driverId).where('organization_id', '=', organizationId)
    .where('recorded_at', '>=', from).where('recorded_at', '<=', to)
    .orderBy('recorded_at').orderBy('id').limit(limit + 1)

/** The page of `GET /users/{id}/positions`: at most `limit` positions, and whether more lie in the range. */
export async function positionsOfDriver(db: Kysely<any>, organizationId: string, driverId: string, from: Date, to: Date, limit: number): Promise<{ positions: StoredPosition[]; more: boolean }> {
  const rows = (await driverPositionsQuery(db, organizationId, driverId, from, to, limit).execute() as PositionColumns[]).map(toStored)
  return { positions: rows.slice(0, limit), more: rows.length > limit }
}

/** The newest position of each driver recorded at or after `since` (the route object's `driver_position`). */
export async function newestPositions(db: Kysely<any>, driverIds: readonly string[], since: Date): Promise<Map<string, StoredPosition>> {
  if (!driverIds.length) return new Map()
  const r = await sql<PositionColumns & { driver_id: string }>`
    select d.driver_id, p.* from unnest(${[...new Set(driverIds)]}::text[]) as d(driver_id)
    cross join lateral (
      select lat, lng, recorded_at, received_at, accuracy_m, speed_kmh, heading from driver_positions x
      where x.driver_id = d.driver_id and x.recorded_at >= ${since}::timestamptz order by x.recorded_at desc limit 1
    ) p`.execute(db)
  return new Map(r.rows.map((row) => [row.driver_id, toStored(row)]))
}

/** Deletes positions received before `before`, a chunk at a time (short transactions); returns how many. */
export async function prunePositions(db: Kysely<any>, before: Date, chunk = 10_000): Promise<number> {
  let total = 0
  for (;;) {
    const r = await sql`
      delete from driver_positions where id in (
        select id from driver_positions where received_at < ${before}::timestamptz limit ${chunk})`.execute(db)
    const n = Number(r.numAffectedRows ?? 0)
    total += n
    if (n < chunk) break
  }
  // The engine's journal only orders positions against events: older than every position, it orders nothing.
  await sql`delete from eta_journal where recorded_at < ${before}::timestamptz`.execute(db)
  return total
}

/** Where a reader of the positions stands: the last (transaction, id) it took, as `"<xid8>/<id>"`. */
export const POSITIONS_START = '0/0'

/** One stored batch (one POST): its driver, when it was received, and its newest position. */
export interface PositionBatch {
  organizationId: string
  driverId: string
  receivedAt: number
  newest: { lat: number; lng: number; recordedAt: number }
}

type PositionRow = { tx: string; id: number; organization_id: string; driver_id: string; lat: number; lng: number; recorded_at: Date; received_at: Date }

/** Rows of one transaction are one batch (one POST, one driver); each keeps its newest position. */
function batchesOf(rows: readonly PositionRow[]): PositionBatch[] {
  const batches: PositionBatch[] = []
  let current: PositionBatch | undefined
  let currentTx: string | undefined
  for (const row of rows) {
    const recordedAt = new Date(row.recorded_at).getTime()
    const point = { lat: Number(row.lat), lng: Number(row.lng), recordedAt }
    if (row.tx !== currentTx || row.driver_id !== current?.driverId) {
      current = { organizationId: row.organization_id, driverId: row.driver_id, receivedAt: new Date(row.received_at).getTime(), newest: point }
      currentTx = row.tx
      batches.push(current)
    } else if (recordedAt > current.newest.recordedAt) current.newest = point
  }
  return batches
}

/** A full page may end inside a batch: that batch is left whole for the next read. */
function wholeBatches(rows: PositionRow[], limit: number): PositionRow[] {
  if (rows.length < limit) return rows
  const lastTx = rows[rows.length - 1]!.tx
  const cut = rows.filter((x) => x.tx !== lastTx)
  return cut.length ? cut : rows
}

const cursorOf = (rows: readonly PositionRow[], otherwise: string) => {
  const last = rows[rows.length - 1]
  return last ? `${last.tx}/${last.id}` : otherwise
}

const COLUMNS = sql`transaction_id::text as tx, id, organization_id, driver_id, lat, lng, recorded_at, received_at`
const pair = (cursor: string) => {
  const [tx, id] = cursor.split('/')
  return sql`(${tx}::xid8, ${Number(id)}::bigint)`
}

/**
 * Batches stored after `cursor`, in commit order, never skipping one committed late (rows are taken
 * in (transaction, id) order and only from transactions below the snapshot's xmin, as the log is
 * read); whole batches only, up to about `limit` rows. `cursor` is where the last one ends.
 */
export async function batchesAfter(db: Kysely<any>, cursor: string, limit: number): Promise<{ batches: PositionBatch[]; cursor: string }> {
  const r = await sql<PositionRow>`
    select ${COLUMNS} from public.driver_positions
    where (transaction_id, id) > ${pair(cursor)} and transaction_id < pg_snapshot_xmin(pg_current_snapshot())
    order by transaction_id, id limit ${limit}`.execute(db)
  const rows = wholeBatches(r.rows, limit)
  return { batches: batchesOf(rows), cursor: cursorOf(rows, cursor) }
}

/** Orders two cursors of `batchesAfter`. */
export function comparePositionCursors(a: string, b: string): number {
  const [ta, ia] = a.split('/').map(BigInt) as [bigint, bigint]
  const [tb, ib] = b.split('/').map(BigInt) as [bigint, bigint]
  return ta !== tb ? (ta < tb ? -1 : 1) : ia === ib ? 0 : ia < ib ? -1 : 1
}

/**
 * Batches in (from, to], which a live engine took between two of its rounds (a rebuild replays
 * them in its order): all committed, since a reader took them; pruned ones are simply gone.
 */
export async function batchesBetween(db: Kysely<any>, from: string, to: string, limit = 5000): Promise<PositionBatch[]> {
  const out: PositionBatch[] = []
  let cursor = from
  while (comparePositionCursors(cursor, to) < 0) {
    const r = await sql<PositionRow>`
      select ${COLUMNS} from public.driver_positions
      where (transaction_id, id) > ${pair(cursor)} and (transaction_id, id) <= ${pair(to)}
      order by transaction_id, id limit ${limit}`.execute(db)
    const rows = wholeBatches(r.rows, limit)
    if (!rows.length) break
    out.push(...batchesOf(rows))
    cursor = cursorOf(rows, cursor)
  }
  return out
}
