import { type Kysely, type Selectable, type Transaction, sql } from 'kysely'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import type { EtaRoutesTable, TaskEtasTable } from '../../projections/etas/tables.js'
import { encodeChangeNotice, nextBatchToken, READ_MODEL_CHANGED_CHANNEL } from '../../projections/change-notices.js'
import { json, numOrNull as num } from '../shared/rows.js'
import type { RouteState, RoundOutput, TaskState } from './eta-model.js'

/**
 * The ETA read model's storage (projections/etas/tables.ts): the engine's state in and out, its
 * outputs, checkpoint and lease. Plain functions over a read-model `db` (schema `read_model`, or the
 * rebuild's own); the engine's journal and the positions are platform tables in `public`.
 */

export type EtaDb = Kysely<ReadModelDatabase>
type Trx = EtaDb | Transaction<ReadModelDatabase>

/** A table of the read-model schema in raw SQL (Kysely's withSchema reaches only the query builder's tables). */
const table = (schema: string, name: string) => sql.table(`${schema}.${name}`)

/** Change-notice topic: routes whose `task.eta` frames grew (the progress streams wake on it). */
export const ROUTE_ETAS = 'route_etas'
export const ENGINE = 'main'

const ms = (v: Date | string | null): number | null => (v === null ? null : new Date(v).getTime())
const date = (v: number | null): Date | null => (v === null ? null : new Date(v))
const chunks = <T>(xs: readonly T[], n: number): T[][] => {
  const out: T[][] = []
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n))
  return out
}

function routeOfRow(r: Selectable<EtaRoutesTable>): RouteState {
  const lat = num(r.position_lat); const lng = num(r.position_lng); const at = ms(r.position_recorded_at)
  const slat = num(r.start_lat); const slng = num(r.start_lng)
  return {
    routeId: Number(r.route_id), organizationId: String(r.organization_id), driverId: r.driver_id,
    status: r.status, start: slat === null || slng === null ? null : { lat: slat, lng: slng }, startedAt: ms(r.started_at),
    taskUlids: json<string[]>(r.task_ulids), position: lat === null || lng === null || at === null ? null : { point: { lat, lng }, recordedAt: at },
    legMeters: Number(r.leg_meters), legMs: Number(r.leg_ms), computedAt: ms(r.computed_at), etaSeq: Number(r.eta_seq),
  }
}

const rowOfRoute = (r: RouteState) => ({
  route_id: r.routeId, organization_id: r.organizationId, driver_id: r.driverId, status: r.status,
  start_lat: r.start?.lat ?? null, start_lng: r.start?.lng ?? null, started_at: date(r.startedAt), task_ulids: JSON.stringify(r.taskUlids),
  position_lat: r.position?.point.lat ?? null, position_lng: r.position?.point.lng ?? null, position_recorded_at: date(r.position?.recordedAt ?? null),
  leg_meters: r.legMeters, leg_ms: r.legMs, computed_at: date(r.computedAt), eta_seq: r.etaSeq,
})

function taskOfRow(r: Selectable<TaskEtasTable>): TaskState {
  const lat = num(r.lat); const lng = num(r.lng)
  const etaAt = ms(r.eta_at)
  return {
    ulid: String(r.ulid), organizationId: String(r.organization_id), routeId: num(r.route_id), status: r.status,
    point: lat === null || lng === null ? null : { lat, lng },
    windows: json<{ from: string; to: string }[]>(r.time_windows).map((w) => ({ from: Date.parse(w.from), to: Date.parse(w.to) })),
    serviceMs: Number(r.service_ms), arrivedAt: ms(r.arrived_at), finalAt: ms(r.final_at),
    // The engine writes eta_at and eta_basis together (rowOfTask).
    eta: etaAt === null || r.eta_basis === null ? null : {
      at: etaAt, from: ms(r.eta_from)!, to: ms(r.eta_to)!, basis: r.eta_basis, computedAt: ms(r.eta_computed_at)!,
      windowFrom: ms(r.eta_window_from), windowTo: ms(r.eta_window_to), lateSince: ms(r.eta_late_since),
    },
    historySeq: Number(r.history_seq), delayedAt: ms(r.delayed_at), backInsideAt: ms(r.back_inside_at),
  }
}

const rowOfTask = (t: TaskState) => ({
  ulid: t.ulid, organization_id: t.organizationId, route_id: t.routeId, status: t.status, lat: t.point?.lat ?? null, lng: t.point?.lng ?? null,
  time_windows: JSON.stringify(t.windows.map((w) => ({ from: new Date(w.from).toISOString(), to: new Date(w.to).toISOString() }))),
  service_ms: t.serviceMs, arrived_at: date(t.arrivedAt), final_at: date(t.finalAt),
  eta_at: date(t.eta?.at ?? null), eta_from: date(t.eta?.from ?? null), eta_to: date(t.eta?.to ?? null), eta_basis: t.eta?.basis ?? null,
  eta_computed_at: date(t.eta?.computedAt ?? null), eta_window_from: date(t.eta?.windowFrom ?? null), eta_window_to: date(t.eta?.windowTo ?? null),
  eta_late_since: date(t.eta?.lateSince ?? null), history_seq: t.historySeq, delayed_at: date(t.delayedAt), back_inside_at: date(t.backInsideAt),
})

export async function loadRoutes(db: EtaDb, ids: readonly number[]): Promise<RouteState[]> {
  if (!ids.length) return []
  const rows = await db.selectFrom('eta_routes').selectAll().where('route_id', 'in', [...ids]).execute()
  return rows.map((r) => routeOfRow(r))
}

export async function loadTasks(db: EtaDb, ulids: readonly string[]): Promise<TaskState[]> {
  if (!ulids.length) return []
  const out: TaskState[] = []
  for (const part of chunks(ulids, 5000)) {
    const rows = await db.selectFrom('task_etas').selectAll().where('ulid', 'in', part).execute()
    for (const r of rows) out.push(taskOfRow(r))
  }
  return out
}

export async function loadFollowedIndex(db: EtaDb): Promise<{ routeId: number; driverId: string | null }[]> {
  const rows = await db.selectFrom('eta_routes').select(['route_id', 'driver_id']).where('status', 'in', ['published', 'started']).execute()
  return rows.map((r) => ({ routeId: Number(r.route_id), driverId: r.driver_id }))
}

/** The round's writes: state, the restated ETAs' history and frames, arrivals fixed into the history. */
export async function writeOutput(trx: Trx, schema: string, out: RoundOutput): Promise<void> {
  for (const part of chunks(out.routes.map(rowOfRoute), 1000)) {
    await trx.insertInto('eta_routes').values(part).onConflict((oc) => oc.column('route_id').doUpdateSet((eb) => ({
      driver_id: eb.ref('excluded.driver_id'), status: eb.ref('excluded.status'), start_lat: eb.ref('excluded.start_lat'), start_lng: eb.ref('excluded.start_lng'),
      started_at: eb.ref('excluded.started_at'), task_ulids: eb.ref('excluded.task_ulids'), position_lat: eb.ref('excluded.position_lat'),
      position_lng: eb.ref('excluded.position_lng'), position_recorded_at: eb.ref('excluded.position_recorded_at'), leg_meters: eb.ref('excluded.leg_meters'),
      leg_ms: eb.ref('excluded.leg_ms'), computed_at: eb.ref('excluded.computed_at'), eta_seq: eb.ref('excluded.eta_seq'),
    }))).execute()
  }
  for (const part of chunks(out.tasks.map(rowOfTask), 1000)) {
    await trx.insertInto('task_etas').values(part).onConflict((oc) => oc.column('ulid').doUpdateSet((eb) => ({
      organization_id: eb.ref('excluded.organization_id'), route_id: eb.ref('excluded.route_id'), status: eb.ref('excluded.status'),
      lat: eb.ref('excluded.lat'), lng: eb.ref('excluded.lng'), time_windows: eb.ref('excluded.time_windows'), service_ms: eb.ref('excluded.service_ms'),
      arrived_at: eb.ref('excluded.arrived_at'), final_at: eb.ref('excluded.final_at'), eta_at: eb.ref('excluded.eta_at'), eta_from: eb.ref('excluded.eta_from'),
      eta_to: eb.ref('excluded.eta_to'), eta_basis: eb.ref('excluded.eta_basis'), eta_computed_at: eb.ref('excluded.eta_computed_at'),
      eta_window_from: eb.ref('excluded.eta_window_from'), eta_window_to: eb.ref('excluded.eta_window_to'), eta_late_since: eb.ref('excluded.eta_late_since'),
      history_seq: eb.ref('excluded.history_seq'), delayed_at: eb.ref('excluded.delayed_at'), back_inside_at: eb.ref('excluded.back_inside_at'),
    }))).execute()
  }
  for (const part of chunks(out.history, 1000)) {
    await trx.insertInto('task_eta_history').values(part.map((h) => ({
      ...h, computed_at: new Date(h.computed_at), eta_at: new Date(h.eta_at), eta_from: new Date(h.eta_from), eta_to: new Date(h.eta_to),
      window_from: date(h.window_from), window_to: date(h.window_to), arrived_at: null, outcome: null,
    }))).onConflict((oc) => oc.columns(['task_ulid', 'seq']).doNothing()).execute()
  }
  if (out.fixes.length) {
    const f = out.fixes
    await sql`
      update ${table(schema, 'task_eta_history')} as h
      set arrived_at = coalesce(h.arrived_at, x.arrived_at), outcome = coalesce(x.outcome, h.outcome)
      from unnest(${f.map((x) => x.ulid)}::text[], ${f.map((x) => date(x.arrivedAt))}::timestamptz[], ${f.map((x) => x.outcome)}::text[]) as x(ulid, arrived_at, outcome)
      where h.task_ulid = x.ulid`.execute(trx)
  }
  for (const part of chunks(out.feed, 1000)) {
    await trx.insertInto('route_eta_feed').values(part.map((r) => ({ ...r, data: JSON.stringify(r.data) })))
      .onConflict((oc) => oc.columns(['route_id', 'seq']).doNothing()).execute()
  }
}

/** The NOTIFY of a round's frames, in its transaction: every process's streams of those routes wake. */
export async function notifyFrames(trx: Trx, routeIds: Iterable<number>): Promise<void> {
  const keys = [...new Set(routeIds)]
  if (!keys.length) return
  const payload = encodeChangeNotice({ batch: nextBatchToken(), keys: { [ROUTE_ETAS]: keys }, whole: [], everything: false })
  await sql`select pg_notify(${READ_MODEL_CHANGED_CHANNEL}, ${payload})`.execute(trx)
}

export interface Checkpoint { log: string; positions: string }

/** Takes the engine's lease if free or lapsed (renews it if ours); its checkpoint, or undefined when another holds it. */
/**
 * Takes the engine's lease if free or lapsed (renews it if ours): its checkpoint and who held it
 * before (anyone else, a rebuild included, means the tables moved under the caller), or undefined
 * when another holds it.
 */
export async function acquireLease(db: EtaDb, schema: string, owner: string, leaseMs: number, start: Checkpoint): Promise<(Checkpoint & { previousOwner: string | null }) | undefined> {
  const r = await sql<{ log_checkpoint: string; positions_checkpoint: string; previous_owner: string | null }>`
    with before as (select owner from ${table(schema, 'eta_checkpoint')} where name = ${ENGINE})
    insert into ${table(schema, 'eta_checkpoint')} as c (name, log_checkpoint, positions_checkpoint, owner, lease_until)
    values (${ENGINE}, ${start.log}, ${start.positions}, ${owner}, clock_timestamp() + make_interval(secs => ${leaseMs / 1000}::float8))
    on conflict (name) do update set owner = excluded.owner, lease_until = excluded.lease_until
      where c.owner = excluded.owner or c.owner is null or c.lease_until < clock_timestamp()
    returning log_checkpoint, positions_checkpoint, (select owner from before) as previous_owner`.execute(db)
  const row = r.rows[0]
  return row ? { log: row.log_checkpoint, positions: row.positions_checkpoint, previousOwner: row.previous_owner } : undefined
}

/** Moves the checkpoint and extends the lease, only if both are still ours (false: another took over). */
export async function moveCheckpoint(trx: Trx, schema: string, owner: string | null, leaseMs: number, from: Checkpoint, to: Checkpoint): Promise<boolean> {
  const r = await sql`
    update ${table(schema, 'eta_checkpoint')}
    set log_checkpoint = ${to.log}, positions_checkpoint = ${to.positions},
        lease_until = case when owner is null then null else clock_timestamp() + make_interval(secs => ${leaseMs / 1000}::float8) end
    where name = ${ENGINE} and owner is not distinct from ${owner} and log_checkpoint = ${from.log} and positions_checkpoint = ${from.positions}`.execute(trx)
  return Number(r.numAffectedRows ?? 0) === 1
}

export async function releaseLease(db: EtaDb, schema: string, owner: string): Promise<void> {
  await sql`update ${table(schema, 'eta_checkpoint')} set owner = null, lease_until = null where name = ${ENGINE} and owner = ${owner}`.execute(db)
}

export async function readCheckpoint(db: EtaDb, schema: string): Promise<(Checkpoint & { owner: string | null; live: boolean }) | undefined> {
  const r = await sql<{ log_checkpoint: string; positions_checkpoint: string; owner: string | null; live: boolean }>`
    select log_checkpoint, positions_checkpoint, owner, coalesce(lease_until > clock_timestamp(), false) as live
    from ${table(schema, 'eta_checkpoint')} where name = ${ENGINE}`.execute(db)
  const row = r.rows[0]
  return row ? { log: row.log_checkpoint, positions: row.positions_checkpoint, owner: row.owner, live: Boolean(row.live) } : undefined
}

/** Records that a round took events up to `logTo` while the positions stood at `positionsBefore` (and ticked at `tickAt`). */
export async function journal(trx: Trx, logTo: string, positionsBefore: string, tickAt: number | null): Promise<void> {
  await sql`insert into public.eta_journal (log_to, positions_before, tick_at) values (${logTo}, ${positionsBefore}, ${date(tickAt)})`.execute(trx)
}

/** Taken by every live round's transaction and by a rebuild's swap: the swap waits for a round, a round for the swap. */
export const ETA_LOCK = 'eta-engine'
export const takeEtaLock = (db: Kysely<any> | Trx) => sql`select pg_advisory_xact_lock(hashtextextended(${ETA_LOCK}, 0))`.execute(db)

export interface JournalEntry { seq: number; logTo: string; positionsBefore: string; tickAt: number | null }

export async function journalAfter(db: Kysely<any>, seq: number, limit: number): Promise<JournalEntry[]> {
  const r = await sql<{ seq: number; log_to: string; positions_before: string; tick_at: Date | null }>`
    select seq, log_to, positions_before, tick_at from public.eta_journal where seq > ${seq} order by seq limit ${limit}`.execute(db)
  return r.rows.map((x) => ({ seq: Number(x.seq), logTo: x.log_to, positionsBefore: x.positions_before, tickAt: ms(x.tick_at) }))
}
