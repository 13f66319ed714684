import { carriedColumns, type CarriedTable } from './carry-over-tables.js'
import { ident, type SqlSide } from './carry-over-sides.js'
import { ENGINE } from '../../etas/eta-tables.js'

/*
 * The carry-over's verification: the same rows on both ends, compared as a count and an md5 over
 * each row's JSON (to_jsonb: one text form for every type on any PostgreSQL version, timestamps
 * in UTC as the caller sets the session's time zone), sorted in the C collation so that both ends
 * agree on the order whatever their default collation.
 */

/** Positions of the log hashed at a time: a difference is reported with its range, and no end builds one huge string. */
const EVENT_CHUNK = 10_000

/** Count and md5 of `json` (a row's JSON, from `from` aliased t); the log's in position order, others sorted. */
const checksumSql = (from: string, json: string, where = '', byPosition = false) => `
  select count(*)::text as n, md5(coalesce(string_agg(s.j, '|' order by ${byPosition ? 's.p' : 's.j collate "C"'}), '')) as h
  from (select ${byPosition ? 't.global_position as p, ' : ''}(${json})::text as j from ${from} t ${where}) s`

async function checksum(side: SqlSide, text: string, params: unknown[] = []): Promise<string> {
  const r = (await side.rows<{ n: string; h: string }>(text, params))[0]!
  return `${r.n} rows, md5 ${r.h}`
}

const carriedJson = (table: CarriedTable, copyTx?: string) => `select to_jsonb(r) from (select ${carriedColumns(table, copyTx)}) r`

/**
 * Differences between the carried tables of the source (as carried: checkpoints moved to
 * `copyTx`, leases dropped) and the target. The log is compared in position order, chunk by
 * chunk: the same events (ids, streams, versions, types, payloads, times) at the same positions.
 */
export async function carriedDifferences(source: SqlSide, target: SqlSide, tables: CarriedTable[], copyTx: string): Promise<string[]> {
  const out: string[] = []
  for (const table of tables) {
    const from = `public.${ident(table.name)}`
    if (table.name === 'es_events') {
      const range = (await source.rows<{ hi: string | null }>(`select max(global_position)::text as hi from public.es_events`))[0]!.hi
      const targetHi = (await target.rows<{ hi: string | null }>(`select max(global_position)::text as hi from public.es_events`))[0]!.hi
      if (range !== targetHi) out.push(`es_events: last position ${range ?? 'none'} in the old database, ${targetHi ?? 'none'} in the new one`)
      const hi = Math.max(Number(range ?? 0), Number(targetHi ?? 0))
      for (let lo = 0; lo < hi; lo += EVENT_CHUNK) {
        const where = `where t.global_position > $1 and t.global_position <= $2`
        const params = [lo, lo + EVENT_CHUNK]
        const [a, b] = [
          await checksum(source, checksumSql(from, carriedJson(table, copyTx), where, true), params),
          await checksum(target, checksumSql(from, carriedJson(table), where, true), params),
        ]
        if (a !== b) out.push(`es_events positions ${lo + 1}–${lo + EVENT_CHUNK}: ${a} in the old database, ${b} in the new one`)
      }
      continue
    }
    const a = await checksum(source, checksumSql(from, carriedJson(table, copyTx)))
    const b = await checksum(target, checksumSql(from, carriedJson(table)))
    if (a !== b) out.push(`${table.name}: ${a} in the old database, ${b} in the new one`)
  }
  return out
}

/**
 * Read-model tables not compared: migration bookkeeping, and where each projection (and the ETA
 * engine) stands and who leases it, which name the log's transaction ids and the old process.
 */
const BOOKKEEPING = new Set(['kysely_migration', 'kysely_migration_lock', 'projection_checkpoints', 'eta_checkpoint'])

interface ReadModelColumn { t: string; c: string; udt: string }
const READ_MODEL_COLUMNS_SQL = `
  select c.table_name as t, c.column_name as c, c.udt_name as udt from information_schema.columns c
  join information_schema.tables tt on tt.table_schema = c.table_schema and tt.table_name = c.table_name
  where c.table_schema = 'read_model' and tt.table_type = 'BASE TABLE' order by 1, 2`

/** Written by the ETA engine (a background process, which may never have run or stand behind), not by the projector. */
const ETA_TABLES = new Set(['eta_routes', 'task_etas', 'task_eta_history', 'route_eta_feed'])

/** A `transaction/position` pair, comparable. */
const pair = (p: string): [bigint, bigint] => {
  const [tx, pos] = p.split('/')
  return [BigInt(tx ?? 0), BigInt(pos ?? 0)]
}
const behind = (a: string, b: string) => {
  const [x, y] = [pair(a), pair(b)]
  return x[0] < y[0] || (x[0] === y[0] && x[1] < y[1])
}
const headOf = async (side: SqlSide, table: string, by: string) =>
  (await side.rows<{ p: string }>(`select transaction_id::text || '/' || ${by}::text as p from public.${table} order by transaction_id desc, ${by} desc limit 1`))[0]?.p ?? '0/0'

export interface ReadModelComparison {
  differences: string[]
  /** What was not compared, and why. */
  notes: string[]
}

/**
 * Differences between the old read models and the ones rebuilt from the carried log: per table,
 * its row count and checksum over the columns both have (a newer version may have added some).
 * A text column named `position` holds a log position: compared without its transaction id.
 * Old read models behind their log cannot be equal to ones rebuilt from all of it: a projection
 * behind is a difference; the ETA engine behind (or never run) leaves its tables uncompared,
 * since the rebuild takes it on to the heads as the live engine would have.
 */
export async function readModelDifferences(source: SqlSide, target: SqlSide): Promise<ReadModelComparison> {
  const differences: string[] = []
  const notes: string[] = []
  const head = await headOf(source, 'es_events', 'global_position')
  for (const c of await source.rows<{ name: string; checkpoint: string }>(`select name, checkpoint from read_model.projection_checkpoints order by name`)) {
    if (behind(c.checkpoint, head)) differences.push(`the old read models are behind their own log: projection ${c.name} at ${c.checkpoint}, the log's head at ${head}`)
  }
  const eta = (await source.rows<{ log: string; positions: string }>(
    `select log_checkpoint as log, positions_checkpoint as positions from read_model.eta_checkpoint where name = $1`, [ENGINE]))[0]
  const etaCurrent = eta !== undefined && !behind(eta.log, head) && !behind(eta.positions, await headOf(source, 'driver_positions', 'id'))
  if (!etaCurrent) notes.push(`the ETA tables were not compared: the old ETA engine ${eta ? `stood behind the log (at ${eta.log})` : 'never ran'}; the rebuild took them to the head`)

  const columns = async (side: SqlSide) => {
    const m = new Map<string, Map<string, string>>()
    for (const r of await side.rows<ReadModelColumn>(READ_MODEL_COLUMNS_SQL)) {
      if (BOOKKEEPING.has(r.t) || (!etaCurrent && ETA_TABLES.has(r.t))) continue
      if (!m.has(r.t)) m.set(r.t, new Map())
      m.get(r.t)!.set(r.c, r.udt)
    }
    return m
  }
  const [old, rebuilt] = [await columns(source), await columns(target)]
  for (const [table, oldColumns] of old) {
    const newColumns = rebuilt.get(table)
    if (!newColumns) continue // a read model this version no longer has
    const common = [...oldColumns.keys()].filter((c) => newColumns.has(c))
    const json = `select to_jsonb(r) from (select ${common.map((c) => (c === 'position' && oldColumns.get(c) === 'text'
      ? `regexp_replace(t.${ident(c)}, '^[0-9]+/', '') as ${ident(c)}`
      : `t.${ident(c)}`)).join(', ')}) r`
    const text = checksumSql(`read_model.${ident(table)}`, json)
    const [a, b] = [await checksum(source, text), await checksum(target, text)]
    if (a !== b) differences.push(`read model ${table}: ${a} in the old database, ${b} rebuilt`)
  }
  return { differences, notes }
}
