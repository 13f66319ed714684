import { ident, type SqlSide } from './carry-over-sides.js'

/**
 * What of the old database is carried over (docs/decisions.md "Carrying PGlite over"): every table
 * of the `public` schema (the event log and everything written beside it that no event holds:
 * sequences' counters, idempotency keys, the bus and outbox, the audit seals, driver positions, the
 * ETA journal…). The `read_model` schema is not copied: it is rebuilt from the log.
 */
export interface CarriedTable {
  name: string
  /** Columns carried; generated and xid8 columns are left to the target's defaults. */
  columns: string[]
  identity: boolean
  /** Columns holding a `transaction/position` checkpoint of the log or of driver positions. */
  positions: string[]
  /** Columns of a lease the old process held (it is gone): carried as null. */
  leases: string[]
  /** A table ordered by (xid8, column): its xid8 becomes the copy's, so that column alone must give the same order. */
  orderedBy?: { xid: string; by: string }
}

const NOT_CARRIED = new Set(['kysely_migration', 'kysely_migration_lock'])

/** Checkpoints of the two (xid8, position) orders (the log's and driver positions'). */
const POSITION_COLUMNS: Record<string, string[]> = {
  bus_relay_checkpoints: ['checkpoint'],
  bus_consumer_start_positions: ['position'],
  audit_notary: ['checkpoint'],
  eta_journal: ['log_to', 'positions_before'],
}
const LEASE_COLUMNS: Record<string, string[]> = {
  bus_relay_checkpoints: ['owner', 'lease_until'],
  audit_notary: ['owner', 'lease_until'],
}
/** Tables with a transaction-id column, and what orders rows within one transaction. */
const XID_ORDER: Record<string, string> = { es_events: 'global_position', driver_positions: 'id' }

/** Nothing was done: the old database and the target are as they were. */
export class CarryOverRefused extends Error {
  override name = 'CarryOverRefused'
}

interface ColumnRow { t: string; c: string; udt: string; identity: string; generated: string }

const COLUMNS_SQL = `
  select c.table_name as t, c.column_name as c, c.udt_name as udt, c.is_identity as identity, c.is_generated as generated
  from information_schema.columns c
  join information_schema.tables tt on tt.table_schema = c.table_schema and tt.table_name = c.table_name
  where c.table_schema = 'public' and tt.table_type = 'BASE TABLE'
  order by c.table_name, c.ordinal_position`

const byTable = (rows: ColumnRow[]): Map<string, ColumnRow[]> => {
  const out = new Map<string, ColumnRow[]>()
  for (const r of rows) out.set(r.t, [...(out.get(r.t) ?? []), r])
  return out
}

/**
 * The tables to carry, in an order the target's foreign keys accept. Refused when the old database
 * holds a table or column this version does not know (it was written by a newer version), or a
 * transaction-id column whose order within a transaction is not known here.
 */
export async function planTables(source: SqlSide, target: SqlSide): Promise<CarriedTable[]> {
  const from = byTable(await source.rows<ColumnRow>(COLUMNS_SQL))
  const to = byTable(await target.rows<ColumnRow>(COLUMNS_SQL))
  const tables: CarriedTable[] = []
  for (const [name, cols] of from) {
    if (NOT_CARRIED.has(name)) continue
    const there = to.get(name)
    if (!there) throw new CarryOverRefused(`the old database has a table public.${name} this version does not know`)
    const known = new Set(there.map((c) => c.c))
    const missing = cols.filter((c) => !known.has(c.c)).map((c) => c.c)
    if (missing.length) throw new CarryOverRefused(`the old database's public.${name} has columns this version does not know: ${missing.join(', ')}`)
    const xids = cols.filter((c) => c.udt === 'xid8').map((c) => c.c)
    if (xids.length > 1 || (xids.length === 1 && !XID_ORDER[name])) {
      throw new CarryOverRefused(`public.${name} has transaction-id columns (${xids.join(', ')}) whose order this version cannot carry over`)
    }
    tables.push({
      name,
      columns: cols.filter((c) => c.udt !== 'xid8' && c.generated !== 'ALWAYS').map((c) => c.c),
      identity: cols.some((c) => c.identity === 'YES'),
      positions: (POSITION_COLUMNS[name] ?? []).filter((c) => known.has(c)),
      leases: (LEASE_COLUMNS[name] ?? []).filter((c) => known.has(c)),
      ...(xids[0] ? { orderedBy: { xid: xids[0], by: XID_ORDER[name]! } } : {}),
    })
  }
  return inForeignKeyOrder(tables, await target.rows<{ t: string; r: string }>(`
    select cl.relname as t, rf.relname as r from pg_constraint k
    join pg_class cl on cl.oid = k.conrelid join pg_class rf on rf.oid = k.confrelid
    where k.contype = 'f' and k.connamespace = 'public'::regnamespace`))
}

function inForeignKeyOrder(tables: CarriedTable[], keys: { t: string; r: string }[]): CarriedTable[] {
  const left = [...tables].sort((a, b) => a.name.localeCompare(b.name))
  const out: CarriedTable[] = []
  while (left.length) {
    const i = left.findIndex((t) => !keys.some((k) => k.t === t.name && k.r !== t.name && left.some((o) => o.name === k.r)))
    out.push(...left.splice(i < 0 ? 0 : i, 1))
  }
  return out
}

/**
 * The columns as carried, from a row aliased `t`: with `copyTx` (the source), checkpoints move to
 * the copy's transaction id and leases are dropped; without it (the target), the columns as they are.
 */
export function carriedColumns(table: CarriedTable, copyTx?: string): string {
  return table.columns.map((c) => {
    const col = `t.${ident(c)}`
    if (copyTx !== undefined && table.positions.includes(c)) {
      // The copy gives every carried row one transaction id and keeps the positions, whose order
      // is checked to be the old (transaction, position) order: a checkpoint keeps its position.
      return `case when ${col} ~ '^[0-9]+/[0-9]+$' and ${col} <> '0/0' then '${copyTx}/' || split_part(${col}, '/', 2) else ${col} end as ${ident(c)}`
    }
    if (copyTx !== undefined && table.leases.includes(c)) return `null as ${ident(c)}`
    return `${col} as ${ident(c)}`
  }).join(', ')
}

/** Rows of `table` whose (transaction id, position) order differs from their position order. */
export async function outOfOrder(source: SqlSide, table: CarriedTable): Promise<number> {
  if (!table.orderedBy) return 0
  const { xid, by } = table.orderedBy
  const r = await source.rows<{ n: string }>(`
    select count(*)::text as n from (
      select ${ident(by)} as p, lag(${ident(by)}) over (order by ${ident(xid)}, ${ident(by)}) as prev from public.${ident(table.name)}
    ) s where s.prev > s.p`)
  return Number(r[0]!.n)
}

export async function rowCount(side: SqlSide, table: string): Promise<number> {
  return Number((await side.rows<{ n: string }>(`select count(*)::text as n from public.${ident(table)}`))[0]!.n)
}

/**
 * Copies one table in batches (keyset on the physical row id, so a batch costs the same wherever
 * it starts): each batch read as JSON from the source and inserted through
 * jsonb_populate_recordset, so every value goes through its type's text form, exactly.
 */
export async function copyTable(source: SqlSide, target: SqlSide, table: CarriedTable, copyTx: string, batchSize: number, onRows: (n: number) => void): Promise<number> {
  const names = table.columns.map(ident).join(', ')
  const insert = `insert into public.${ident(table.name)} (${names})${table.identity ? ' overriding system value' : ''}
    select ${names} from jsonb_populate_recordset(null::public.${ident(table.name)}, $1::jsonb)`
  const read = `select t.ctid::text as k, (select to_jsonb(r) from (select ${carriedColumns(table, copyTx)}) r)::text as j
    from public.${ident(table.name)} t where t.ctid > $1::tid order by t.ctid limit ${Math.trunc(batchSize)}`
  let after = '(0,0)'
  let copied = 0
  for (;;) {
    const rows = await source.rows<{ k: string; j: string }>(read, [after])
    if (!rows.length) return copied
    await target.rows(insert, [`[${rows.map((r) => r.j).join(',')}]`])
    copied += rows.length
    onRows(rows.length)
    after = rows[rows.length - 1]!.k
  }
}

export interface SequenceState { value: string; called: boolean }

/** Every sequence of `public` (identity columns' and the platform's own counters) and where it stands. */
export async function sequenceStates(side: SqlSide): Promise<Map<string, SequenceState>> {
  const names = await side.rows<{ name: string }>(`select sequencename as name from pg_sequences where schemaname = 'public' order by 1`)
  const out = new Map<string, SequenceState>()
  for (const { name } of names) {
    const r = await side.rows<{ value: string; called: boolean }>(`select last_value::text as value, is_called as called from public.${ident(name)}`)
    out.set(name, r[0]!)
  }
  return out
}

export async function setSequences(target: SqlSide, states: Map<string, SequenceState>): Promise<void> {
  for (const [name, s] of states) {
    await target.rows(`select setval($1::regclass, $2::bigint, $3::boolean)`, [`public.${ident(name)}`, s.value, s.called])
  }
}
