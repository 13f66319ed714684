import { type ExpressionBuilder, type Kysely, sql } from 'kysely'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import type { ContractListingsTable } from '../../projections/organizations/tables.js'
import type { PageRequest } from '../http/pagination.js'
import { pageAndMore } from '../http/listing-seek.js'
import { summed } from '../http/listing-sql.js'
import { ValidationError } from '../shared/errors.js'

/**
 * `GET /organizations/my/contracts` flat (issue 32): the caller's rows of `contract_listings` (one
 * per active contract, seen from its side) in one of four orders, each an index range of the
 * organization and side (migration 2026-11-28T01-30-contract-listings). A page after a cursor seeks
 * from the key of the row the cursor names; `page=N` without one is an offset inside that range, as
 * for the other small listings; `meta.total` is the kept count, or under `filter[global]` (free
 * text: no count can key it) a count of the caller's matching rows (docs/decisions.md).
 */

/** The four orders the spec offers, as the query's `sort` names them (none: by name). */
export type ContractSort = 'name' | '-name' | 'market' | '-market'
export const contractSortOf = (sort: string | undefined): ContractSort =>
  sort === '-organizations.name' ? '-name' : sort === 'markets.name' ? 'market' : sort === '-markets.name' ? '-market' : 'name'

type KeyColumn = 'name' | 'no_market' | 'market_sort' | 'counterpart_id'

/**
 * Each order's key, what the listing sorted by before (the organization's name, its market with
 * none last in either direction, its id breaking ties ascending), spelled in the listing's columns.
 */
export const CONTRACT_SORTS: Record<ContractSort, readonly (readonly [KeyColumn, 'asc' | 'desc'])[]> = {
  name: [['name', 'asc'], ['counterpart_id', 'asc']],
  '-name': [['name', 'desc'], ['counterpart_id', 'asc']],
  market: [['no_market', 'asc'], ['market_sort', 'asc'], ['name', 'asc'], ['counterpart_id', 'asc']],
  '-market': [['no_market', 'asc'], ['market_sort', 'desc'], ['name', 'asc'], ['counterpart_id', 'asc']],
}

/** A listed row's place in every order. */
export type ContractKey = Pick<ContractListingsTable, KeyColumn>

export interface ContractQuery { license: 'shipper' | 'carrier'; filter?: string | undefined; sort: ContractSort }

/** Where a page starts: after `after` (the previous page's last row), then `skip` rows on. */
export interface ContractSeek { after?: ContractKey; skip: number }

type Db = Kysely<ReadModelDatabase>
type Eb = ExpressionBuilder<ReadModelDatabase & { l: ContractListingsTable }, 'l'>

function mine(db: Db, orgId: string, q: ContractQuery) {
  let base = db.selectFrom('contract_listings as l').where('l.organization_id', '=', orgId).where('l.license', '=', q.license)
  const f = q.filter?.trim()
  if (f) {
    const like = `%${f.replace(/[\\%_]/g, (m) => `\\${m}`)}%`
    base = base.where((eb) => eb.or([
      eb(sql`lower(l.name)`, 'like', sql`lower(${like})`),
      eb(sql`lower(l.market_sort)`, 'like', sql`lower(${like})`),
    ]))
  }
  return base
}

/**
 * The rows after `key` in an order whose directions differ (a name descending, its ties by id
 * ascending) are no one row comparison; they are the union of ranges, each equal to the key on its
 * first columns and past it on the next: every one an index range of its own, read in order.
 */
function pastKeyRanges(sort: ContractSort, key: ContractKey): ((eb: Eb) => ReturnType<Eb['and']>)[] {
  const cols = CONTRACT_SORTS[sort]
  return cols.map((_, i) => (eb: Eb) => eb.and([
    ...cols.slice(0, i).map(([c]) => eb(`l.${c}`, '=', key[c])),
    eb(`l.${cols[i]![0]}`, cols[i]![1] === 'asc' ? '>' : '<', key[cols[i]![0]]),
  ])).reverse()
}

/** The query of a page's rows (`limit` of them, one more than shown) with their keys. */
export function contractPageQuery(db: Db, orgId: string, q: ContractQuery, seek: ContractSeek, limit: number) {
  // The order as one ORDER BY list (its directions differ from one column to the next).
  const order = (table: string) => sql.join(CONTRACT_SORTS[q.sort].map(([c, d]) => sql`${sql.ref(`${table}.${c}`)} ${sql.raw(d)}`))
  const range = (where?: (eb: Eb) => ReturnType<Eb['and']>) =>
    mine(db, orgId, q).select(['l.counterpart_id', 'l.name', 'l.no_market', 'l.market_sort']).$if(where !== undefined, (qb) => qb.where(where!)).orderBy(order('l'))
  // Each range stops at the page's end; their union is merged in the order (one range: page=N).
  const ranges = seek.after ? pastKeyRanges(q.sort, seek.after).map((w) => range(w)) : [range()]
  const [first, ...rest] = ranges.map((r) => db.selectFrom(r.limit(seek.skip + limit).as('r')).selectAll())
  const merged = rest.reduce((u, r) => u.unionAll(r), first!)
  const page = db.selectFrom(merged.as('u')).selectAll().orderBy(order('u')).offset(seek.skip).limit(limit)
  return db.selectFrom(page.as('p')).innerJoin('organizations as o', 'o.id', 'p.counterpart_id')
    .selectAll('o').select(['p.counterpart_id', 'p.name as key_name', 'p.no_market', 'p.market_sort']).orderBy(order('p'))
}

/** The key of one of the caller's listed rows, undefined when it lists no such organization. */
export const contractKeyOf = (db: Db, orgId: string, license: ContractQuery['license'], counterpartId: string): Promise<ContractKey | undefined> =>
  db.selectFrom('contract_listings').select(['counterpart_id', 'name', 'no_market', 'market_sort'])
    .where('organization_id', '=', orgId).where('license', '=', license).where('counterpart_id', '=', counterpartId).executeTakeFirst()

/** `meta.total`: the kept count of the caller's side, or a count of its rows under a text filter. */
async function contractsTotal(db: Db, orgId: string, q: ContractQuery): Promise<number> {
  if (q.filter?.trim()) return Number((await mine(db, orgId, q).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirst())?.n ?? 0)
  return summed(await db.selectFrom('contract_listing_counts').select('n').where('organization_id', '=', orgId).where('license', '=', q.license).execute())
}

/** A page of the caller's contracts: its organizations' rows, the total, and the key after its last row. */
export async function listContracts(db: Db, orgId: string, q: ContractQuery, page: PageRequest, after?: ContractKey) {
  const total = await contractsTotal(db, orgId, q)
  const seek: ContractSeek = after ? { after, skip: 0 } : { skip: (page.page - 1) * page.perPage }
  const rows = await contractPageQuery(db, orgId, q, seek, page.perPage + 1).execute()
  const { shown, hasMore } = pageAndMore(rows, page.perPage)
  const last = shown.at(-1)
  return {
    rows: shown.map(({ counterpart_id: _c, key_name: _n, no_market: _m, market_sort: _k, ...o }) => o),
    total, hasMore, last: last?.counterpart_id,
  }
}

/** What `cursor` carries: the order it was made in, the last row's organization, the page it opens. */
const encode = (sort: ContractSort, counterpartId: string, page: number) => Buffer.from(JSON.stringify([sort, counterpartId, page])).toString('base64url')

/** `links.next`'s cursor: after the page's last row, when a row follows it. */
export const contractsNextCursor = (hasMore: boolean, last: string | undefined, sort: ContractSort, page: number): string | undefined =>
  hasMore && last ? encode(sort, last, page + 1) : undefined

/**
 * The key a request's cursor seeks after (422 `cursor` when this listing did not give it, gave it
 * for another order, or it names a row the caller does not list); `paging.page` takes its number.
 */
export async function contractsCursorKey(db: Db, orgId: string, q: ContractQuery, raw: string | undefined, paging: { page: number }): Promise<ContractKey | undefined> {
  if (raw === undefined) return undefined
  const invalid = () => ValidationError.field('cursor', 'The cursor is invalid: take it from links.next.')
  let parsed: unknown
  try { parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) } catch { throw invalid() }
  if (!Array.isArray(parsed) || parsed.length !== 3) throw invalid()
  const [sort, id, page]: unknown[] = parsed
  if (sort !== q.sort || typeof id !== 'string' || !/^[\w-]{1,64}$/.test(id) || typeof page !== 'number' || !Number.isSafeInteger(page) || page < 1) throw invalid()
  const key = await contractKeyOf(db, orgId, q.license, id)
  if (!key) throw invalid()
  paging.page = page
  return key
}
