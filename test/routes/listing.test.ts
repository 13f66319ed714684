import { type Kysely, sql } from 'kysely'
import t from 'tap'
import { build } from '../helpers/build.js'
import { backfilledAgain, planOf, scanFaults } from '../helpers/listing-checks.js'
import { routeListingDays, routePage, routePageQuery, type RouteFilters } from '../../src/routes/listing-queries.js'
import { seekToOffset } from '../../src/http/listing-seek.js'
import * as listingsMigration from '../../projections/migrations/2026-11-28T01-10-route-listings.js'
import { routesWorld } from './fixtures.js'

/**
 * The routes listing, newest shift first (issue 32): exact totals from the kept counts under each
 * filter after creates and status changes, keyset `links.next` while routes arrive, `page=N` equal
 * to walking, the driver's view, isolation, index scans only (PostgreSQL), the backfill.
 */

interface Listed { id: number; shift_date: string; status: string; driver: string | null }

t.test('routes listing over its indexes and shift-date counts', async (t) => {
  const h = await build(t)
  const w = await routesWorld(h)
  const other = await h.createOrganization({ roles: ['carrier'] })

  // Eight routes over three shift dates (several on one date: the id breaks the tie), three with the driver.
  const dates = ['2026-11-20', '2026-11-21', '2026-11-21', '2026-11-22', '2026-11-20', '2026-11-22', '2026-11-21', '2026-11-22']
  const ids: number[] = []
  for (const [i, shift_date] of dates.entries()) {
    const withDriver = i % 3 === 0
    const tasks = withDriver ? [(await w.task()).ulid] : []
    ids.push((await w.route({ shift_date, ...(withDriver ? { driver_id: w.driver.id, task_ulids: tasks } : {}) })).id)
  }
  const theirs = (await h.call('POST', '/api/v1/routes', { token: other.token, body: { shift_date: '2026-11-21' } })).json().route.id as number
  t.equal((await w.api('POST', `/routes/${ids[0]}/publish`)).statusCode, 200)
  t.equal((await w.api('POST', `/routes/${ids[3]}/publish`)).statusCode, 200)
  t.equal((await w.api('POST', `/routes/${ids[1]}/block`, { reason: 'flooded road' })).statusCode, 200)
  t.equal((await w.api('POST', `/routes/${ids[3]}/block`, { reason: 'van broke' })).statusCode, 200)
  t.equal((await w.api('POST', `/routes/${ids[3]}/unblock`)).statusCode, 200)

  const get = async (token: string, query: string) => {
    const res = await h.call('GET', `/api/v1/routes${query}`, { token })
    t.equal(res.statusCode, 200, res.body)
    return res.json().routes
  }
  const everything = async (token: string, filter = ''): Promise<Listed[]> =>
    (await get(token, `?perPage=100${filter}`)).data.map((r: any) => ({ id: r.id, shift_date: r.shift_date, status: r.status, driver: r.driver?.id ?? null }))
  const newestFirst = (a: Listed, b: Listed) => (a.shift_date < b.shift_date ? 1 : a.shift_date > b.shift_date ? -1 : b.id - a.id)

  t.test('totals are exact under each filter after creates and status changes', async (t) => {
    const all = await everything(w.carrier.token)
    t.same(all.map((r) => r.id).sort(), [...ids].sort())
    t.same(all, [...all].sort(newestFirst), 'newest shift first, the later id first on a date')
    t.equal((await get(w.carrier.token, '')).meta.total, 8)
    const cases: [string, (r: Listed) => boolean][] = [
      ['?status=draft', (r) => r.status === 'draft'], ['?status=published', (r) => r.status === 'published'], ['?status=blocked', (r) => r.status === 'blocked'],
      [`?driver_id=${w.driver.id}`, (r) => r.driver === w.driver.id], [`?driver_id=${w.driver.id}&status=published`, (r) => r.driver === w.driver.id && r.status === 'published'],
      ['?shift_date=2026-11-21', (r) => r.shift_date === '2026-11-21'], ['?shift_date=2026-11-22&status=draft', (r) => r.shift_date === '2026-11-22' && r.status === 'draft'],
    ]
    for (const [q, keep] of cases) {
      const page = await get(w.carrier.token, `${q}&perPage=100`)
      t.equal(page.meta.total, all.filter(keep).length, `total ${q}`)
      t.same(page.data.map((r: any) => r.id), all.filter(keep).map((r) => r.id), `rows ${q}`)
    }
    t.equal(all.filter((r) => r.status === 'published').length, 2, 'published, blocked and unblocked moved their counts')
  })

  t.test('the driver sees its published routes, counted', async (t) => {
    const mine = await get(w.driver.token, '?perPage=1')
    t.equal(mine.meta.total, 2)
    const next = await get(w.driver.token, new URL(mine.links.next).search)
    t.same([mine.data[0].id, next.data[0].id], [ids[3], ids[0]])
    t.equal(next.links.next, null)
  })

  t.test('tenant isolation', async (t) => {
    t.notOk((await everything(w.carrier.token)).some((r) => r.id === theirs))
    t.same((await everything(other.token)).map((r) => r.id), [theirs])
    t.equal((await get(other.token, '?status=published')).meta.total, 0)
  })

  t.test('following links.next returns every route once, in order, while routes arrive', async (t) => {
    const before = (await everything(w.carrier.token)).map((r) => r.id)
    const walked: number[] = []
    let url: string | null = '/api/v1/routes?perPage=3'
    let pages = 0
    while (url && pages < 10) {
      const page: any = await get(w.carrier.token, url.slice(url.indexOf('?')))
      pages++
      t.equal(page.meta.current_page, pages)
      walked.push(...page.data.map((r: any) => r.id))
      // A later shift than every listed one: the walk, past it, does not see it nor repeat a row.
      await w.route({ shift_date: '2026-12-01' })
      url = page.links.next
    }
    t.same(walked, before)
    t.equal(pages, 3)
    t.equal((await get(w.carrier.token, '')).meta.total, 8 + pages)
    t.equal((await h.call('GET', '/api/v1/routes?cursor=bm90LWEtY3Vyc29y', { token: w.carrier.token })).statusCode, 422)
  })

  t.test('page=N without a cursor equals walking', async (t) => {
    for (const filter of ['', '&status=draft', `&driver_id=${w.driver.id}`, '&shift_date=2026-11-21']) {
      const all = (await everything(w.carrier.token, filter)).map((r) => r.id)
      for (const perPage of [2, 3]) {
        for (let n = 1; n <= Math.ceil(all.length / perPage) + 1; n++) {
          const page = await get(w.carrier.token, `?perPage=${perPage}&page=${n}${filter}`)
          t.same(page.data.map((r: any) => r.id), all.slice((n - 1) * perPage, n * perPage), `page ${n} of ${perPage}${filter}`)
          t.equal(page.meta.total, all.length)
        }
      }
    }
  })

  t.test('the migration\'s backfill from routes equals what the projection wrote', async (t) => {
    const { projected, backfilled } = await backfilledAgain(h.platform.db as Kysely<any>, listingsMigration, ['route_listing_counts'])
    t.same(backfilled, projected)
  })

  t.test('many routes over many shift dates: deep pages equal walking; index scans only', async (t) => {
    const db = h.platform.db as Kysely<any>
    const orgId = 'synthetic-org'
    // 20,000 routes over 400 shift dates, three statuses, a driver on every tenth.
    await sql`insert into read_model.routes (id, organization_id, shift_date, status, driver_id, task_count, created_at, updated_at, stream_version)
      select 1000000 + i, ${orgId}, to_char(date '2025-01-01' + (i / 50), 'YYYY-MM-DD'), (array['draft', 'published', 'finished'])[1 + i % 3],
        case when i % 10 = 0 then 'usr_syn' end, 0, now(), now(), 1
      from generate_series(1, 20000) as i`.execute(db)
    await sql`insert into read_model.route_listing_counts (org_id, driver_id, status, day, n)
      select organization_id, d, status, shift_date::date, count(*) from read_model.routes,
        lateral (select '' as d union all select driver_id where driver_id is not null) s
      where organization_id = ${orgId} group by 1, 2, 3, 4`.execute(db)
    await sql`analyze read_model.routes`.execute(db)
    await sql`analyze read_model.route_listing_counts`.execute(db)
    const rm = h.platform.rm
    const viewer = { organizationId: orgId, driverId: null }
    const walk = async (f: RouteFilters) => {
      const out: number[] = []
      let before
      for (;;) {
        const rows = await routePage(rm, viewer, f, before ? { before, skip: 0 } : { skip: 0 }, 500)
        out.push(...rows.map((r) => r.id))
        if (rows.length < 500) return out
        before = rows.at(-1)!.key
      }
    }
    const filters: RouteFilters[] = [{}, { status: 'finished' }, { driver_id: 'usr_syn' }, { driver_id: 'usr_syn', status: 'draft' }, { shift_date: '2025-06-01' }]
    for (const f of filters) {
      const walked = await walk(f)
      const days = (await routeListingDays(rm, viewer, f))!
      t.equal(days.reduce((s, d) => s + d.n, 0), walked.length, `total ${JSON.stringify(f)}`)
      for (const n of [1, 2, 17, Math.ceil(walked.length / 20)].filter((n) => (n - 1) * 20 < walked.length)) {
        const rows = await routePage(rm, viewer, f, seekToOffset(days, (n - 1) * 20)!, 20)
        t.same(rows.map((r) => r.id), walked.slice((n - 1) * 20, n * 20), `page ${n} ${JSON.stringify(f)}`)
      }
    }
    for (const f of filters) {
      const days = (await routeListingDays(rm, viewer, f))!
      const n = days.reduce((s, d) => s + d.n, 0)
      for (const offset of [0, Math.max(0, n - 50)]) {
        const plan = await planOf(routePageQuery(rm, viewer, f, seekToOffset(days, offset)!, 21))
        t.same(scanFaults(plan, ['routes']), [], `index scans, no sort over the table: ${JSON.stringify(f)} at ${offset}`)
      }
    }
  })
})
