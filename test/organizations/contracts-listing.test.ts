import { type Kysely, sql } from 'kysely'
import t, { type Test } from 'tap'
import { build } from '../helpers/build.js'
import { backfilledAgain, planOf, scanFaults } from '../helpers/listing-checks.js'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import { contractKeyOf, contractPageQuery, CONTRACT_SORTS, type ContractSeek, type ContractSort } from '../../src/organizations/contract-listing.js'
import * as listingsMigration from '../../projections/migrations/2026-11-28T01-30-contract-listings.js'

/**
 * The contracts listing (issue 32): the order the listing had when it joined contracts to
 * organizations and sorted them (the reference below is that query), links.next walking every row
 * once under each sort and filter, page=N equal to walking, an exact total from the kept counts
 * after new contracts, isolation, a bad cursor refused, index scans only (PostgreSQL), the backfill.
 */

type License = 'shipper' | 'carrier'

/** The listing as it was before issue 32: a join and a sort over all the caller's contracts. */
async function reference(db: Kysely<ReadModelDatabase>, orgId: string, license: License, filter: string, sort: string): Promise<string[]> {
  const [mine, theirs] = license === 'shipper' ? ['carrier_id', 'shipper_id'] as const : ['shipper_id', 'carrier_id'] as const
  let q = db.selectFrom('contracts as c').innerJoin('organizations as o', 'o.id', `c.${theirs}`)
    .where(`c.${mine}`, '=', orgId).where('c.status', '=', 'active')
  if (filter) {
    const like = `%${filter}%`
    q = q.where((eb) => eb.or([eb(sql`lower(o.name)`, 'like', sql`lower(${like})`), eb(sql`lower(coalesce(o.market, ''))`, 'like', sql`lower(${like})`)]))
  }
  const desc = sort.startsWith('-')
  const byMarket = sort.endsWith('markets.name')
  const rows = await q.select('o.id')
    .$if(byMarket, (qb) => qb.orderBy('o.market', (ob) => (desc ? ob.desc() : ob.asc()).nullsLast()))
    .orderBy('o.name', desc && !byMarket ? 'desc' : 'asc').orderBy('o.id').execute()
  return rows.map((r) => r.id)
}

t.test('contracts listing over contract_listings and its counts', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ name: 'Carrier One', roles: ['carrier'] })
  const rival = await h.createOrganization({ name: 'Carrier Two', roles: ['carrier'] })
  // Names that tie (the id breaks it), markets that tie, and no market at all.
  const shippers: { id: string; token: string }[] = []
  for (const [name, market] of [['Zeta Foods', 'Argentina'], ['Alpha Retail', 'Argentina'], ['Mid Market', 'Chile'], ['Same Name', 'Chile'],
    ['Same Name', undefined], ['alpha lower', 'Argentina'], ['Brava', undefined], ['Same Name', 'Argentina'], ['Océano', 'Uruguay']] as const) {
    const s = await h.createOrganization({ name, roles: ['shipper'], ...(market ? { market } : {}) })
    await h.signContract(carrier.id, s.id)
    shippers.push(s)
  }
  const theirs = await h.createOrganization({ name: 'Not Yours', roles: ['shipper'], market: 'Chile' })
  await h.signContract(rival.id, theirs.id)
  await h.signContract(rival.id, shippers[0]!.id)

  const get = async (token: string, query: string) => {
    const res = await h.call('GET', `/api/v1/organizations/my/contracts${query}`, { token })
    t.equal(res.statusCode, 200, res.body)
    return res.json().organizations
  }
  /** Every row through links.next from page 1 (meta.from checked on each page). */
  async function walk(t: Test, token: string, query: string): Promise<string[]> {
    const ids: string[] = []
    let next: string | null = `?perPage=2${query}`
    while (next) {
      const page = await get(token, next.replace(/^.*\/contracts/, ''))
      if (page.data.length) t.equal(page.meta.from, ids.length + 1, 'meta.from counts the rows before the page')
      ids.push(...page.data.map((o: { id: string }) => o.id))
      if (page.links.next) t.match(page.links.next, /[?&]cursor=[A-Za-z0-9_-]+/, 'links.next seeks with a cursor')
      next = page.links.next
    }
    return ids
  }
  async function byPages(token: string, query: string): Promise<string[]> {
    const first = await get(token, `?perPage=2${query}`)
    const ids: string[] = []
    for (let p = 1; p <= first.meta.last_page; p++) ids.push(...(await get(token, `?perPage=2&page=${p}${query}`)).data.map((o: { id: string }) => o.id))
    return ids
  }

  const sorts = ['', 'organizations.name', '-organizations.name', 'markets.name', '-markets.name']
  const cases: [string, License, string, string][] = []
  for (const sort of sorts) {
    for (const filter of ['', 'alpha', 'chile', 'nothing-matches']) cases.push([carrier.token, 'shipper', filter, sort])
  }
  cases.push([shippers[0]!.token, 'carrier', '', ''], [shippers[0]!.token, 'carrier', '', '-organizations.name'], [rival.token, 'shipper', '', 'markets.name'])

  t.test('each sort and filter: the old order, walked once, page=N equal, total exact', async (t) => {
    for (const [token, license, filter, sort] of cases) {
      const orgId = token === carrier.token ? carrier.id : token === rival.token ? rival.id : shippers[0]!.id
      const query = `&license=${license}${filter ? `&filter[global]=${filter}` : ''}${sort ? `&sort=${sort}` : ''}`
      const expected = await reference(h.platform.rm, orgId, license, filter, sort)
      const walked = await walk(t, token, query)
      t.same(walked, expected, `${query}: walking links.next gives the old order, each row once`)
      t.same(await byPages(token, query), expected, `${query}: page=N equals walking`)
      t.equal((await get(token, `?perPage=2${query}`)).meta.total, expected.length, `${query}: total`)
    }
    t.equal((await reference(h.platform.rm, carrier.id, 'shipper', '', '')).length, 9)
  })

  t.test('isolation: another carrier lists only its own, and the counts equal a recount', async (t) => {
    const mine = (await get(rival.token, '?perPage=100')).data.map((o: { id: string }) => o.id)
    t.same(mine.sort(), [theirs.id, shippers[0]!.id].sort())
    const carrierSees = (await get(carrier.token, '?perPage=100')).data.map((o: { id: string }) => o.id)
    t.notOk(carrierSees.includes(theirs.id), 'the rival\'s shipper is not listed to the carrier')
    // A cursor made from the rival's page names a row the carrier does not list: refused.
    const next = (await get(rival.token, '?perPage=1')).links.next
    const cursor = new URL(next).searchParams.get('cursor')!
    const stolen = await h.call('GET', `/api/v1/organizations/my/contracts?perPage=1&cursor=${cursor}`, { token: carrier.token })
    t.equal(stolen.statusCode, 422, stolen.body)
    t.ok(stolen.json().errors.cursor, 'names cursor')
  })

  t.test('total exact after new contracts; kept counts equal a recount', async (t) => {
    const before = (await get(carrier.token, '')).meta.total
    const late = await h.createOrganization({ name: 'Late Comer', roles: ['shipper'] })
    await h.signContract(carrier.id, late.id)
    t.equal((await get(carrier.token, '')).meta.total, before + 1)
    t.equal((await get(late.token, '?license=carrier')).meta.total, 1)
    t.equal((await h.admin('POST', '/contracts', { carrier_id: carrier.id, shipper_id: late.id })).statusCode, 409)
    t.equal((await get(carrier.token, '')).meta.total, before + 1, 'a refused contract counts nothing')
    const kept = await h.platform.rm.selectFrom('contract_listing_counts').select(['organization_id', 'license', 'n']).orderBy('organization_id').orderBy('license').execute()
    const recount = await h.platform.rm.selectFrom('contracts').where('status', '=', 'active')
      .select((eb) => ['carrier_id as organization_id', sql<string>`'shipper'`.as('license'), eb.fn.countAll<string>().as('n')]).groupBy('carrier_id')
      .unionAll((eb) => eb.selectFrom('contracts').where('status', '=', 'active')
        .select((eb) => ['shipper_id as organization_id', sql<string>`'carrier'`.as('license'), eb.fn.countAll<string>().as('n')]).groupBy('shipper_id'))
      .execute()
    const norm = (rows: { organization_id: string; license: string; n: unknown }[]) =>
      rows.map((r) => `${r.organization_id}/${r.license}/${Number(r.n)}`).sort()
    t.same(norm(kept), norm(recount), 'one count per organization and side, equal to a recount')
  })

  t.test('a cursor this listing did not give, or of another sort, is a 422 naming cursor', async (t) => {
    for (const cursor of ['bm9wZQ', 'WyJ4Il0']) {
      const res = await h.call('GET', `/api/v1/organizations/my/contracts?cursor=${cursor}`, { token: carrier.token })
      t.equal(res.statusCode, 422, res.body)
      t.ok(res.json().errors.cursor, 'names cursor')
    }
    const next = (await get(carrier.token, '?perPage=1&sort=markets.name')).links.next
    const cursor = new URL(next).searchParams.get('cursor')!
    const res = await h.call('GET', `/api/v1/organizations/my/contracts?perPage=1&sort=organizations.name&cursor=${cursor}`, { token: carrier.token })
    t.equal(res.statusCode, 422, 'a cursor of the market order does not seek the name order')
    t.ok(res.json().errors.cursor)
  })

  t.test('the migration\'s backfill gives the rows the projection wrote', async (t) => {
    const { projected, backfilled } = await backfilledAgain(h.platform.db, listingsMigration, ['contract_listings', 'contract_listing_counts'])
    t.same(backfilled, projected)
  })

  t.test('index scans only, first and deep pages of every sort (PostgreSQL)', async (t) => {
    const db = h.platform.db
    const orgId = 'org_synthetic'
    // 20,000 shippers of one carrier (and their organizations), a market on most, names that repeat every 1,000.
    await sql`insert into read_model.contract_listings (organization_id, license, counterpart_id, contract_id, name, no_market, market_sort)
      select ${orgId}, 'shipper', 'org_s' || lpad(i::text, 6, '0'), 'ctr_' || i, 'Shipper ' || (i % 1000), i % 7 = 0, case when i % 7 = 0 then '' else 'M' || (i % 13) end
      from generate_series(1, 20000) as i`.execute(db)
    await sql`insert into read_model.organizations (id, internal_id, name, subdomain, roles, currency, locale, timezone, market, created_at, updated_at)
      select counterpart_id, 900000000 + row_number() over (), name, 'syn-' || counterpart_id, '["shipper"]', 'ARS', 'es', 'UTC', nullif(market_sort, ''), now(), now()
      from read_model.contract_listings where organization_id = ${orgId}`.execute(db)
    await sql`analyze read_model.contract_listings`.execute(db)
    await sql`analyze read_model.organizations`.execute(db)
    const rm = h.platform.rm
    for (const sort of Object.keys(CONTRACT_SORTS) as ContractSort[]) {
      const deep = (await contractKeyOf(rm, orgId, 'shipper', 'org_s019000'))!
      const seeks: [string, ContractSeek][] = [['page 1', { skip: 0 }], ['a deep cursor', { after: deep, skip: 0 }], ['page 50', { skip: 980 }]]
      for (const [label, seek] of seeks) {
        const plan = await planOf(contractPageQuery(rm, orgId, { license: 'shipper', sort }, seek, 21))
        t.same(scanFaults(plan, ['contract_listings']), [], `index scans, no sort over the table: ${sort}, ${label}`)
      }
    }
  })
})
