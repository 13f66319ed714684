import { type Kysely, sql } from 'kysely'
import t from 'tap'
import { build } from '../helpers/build.js'
import { backfilledAgain, planOf as explained, scanFaults } from '../helpers/listing-checks.js'
import { listingDays, listingPage, listingPageQuery, type ListingFilters } from '../../src/shipments/listing-queries.js'
import { seekToOffset } from '../../src/http/listing-seek.js'
import * as listingsMigration from '../../projections/migrations/2026-11-28T00-25-shipment-listings.js'

/**
 * The organization's shipments listing (issue 32): exact totals from the kept counts under every
 * filter, each organization seeing a shipment once, keyset `links.next`, `page=N` equal to walking,
 * isolation, index scans only (PostgreSQL), and the migration's backfill equal to the projection.
 */

const address = { name: 'Ana', street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR' }
const DAY = 86_400_000

interface Listed { id: number; created_at: string; status: string; external_reference: string | null }

t.test('shipments listing over shipment_listings and its day counts', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ roles: ['carrier'] })
  const shipper = await h.createOrganization({ roles: ['shipper'] })
  const both = await h.createOrganization({ roles: ['carrier', 'shipper'] })
  const nobody = await h.createOrganization({ roles: ['carrier', 'shipper'] })
  await h.signContract(carrier.id, shipper.id)

  const realClock = h.platform.clock
  const today = Date.parse(new Date().toISOString().slice(0, 10))
  const at = (daysAgo: number, hour: number) => new Date(today - daysAgo * DAY + hour * 3_600_000)
  const create = async (token: string, carrierId: string, ref: string, when?: Date) => {
    h.platform.clock = when ? () => when : realClock
    const res = await h.call('POST', '/api/v1/shipments', {
      token, body: { carrier_id: carrierId, external_reference: ref, origin: address, destination: { ...address, name: ref }, packages: [{ grams: 500, length: 10, width: 10, height: 10 }] },
    })
    h.platform.clock = realClock
    t.equal(res.statusCode, 201, res.body)
    return res.json().shipment.id as number
  }

  // Seven shipments over three past days (two at the same instant), and two an organization carries itself.
  const sameInstant = at(2, 9)
  const plan: [number, number][] = [[3, 8], [3, 12], [3, 20], [2, 9], [2, 9], [1, 6], [1, 18]]
  const ids: number[] = []
  for (const [i, [d, hour]] of plan.entries()) ids.push(await create(shipper.token, carrier.id, `REF-${i}`, d === 2 && hour === 9 ? sameInstant : at(d, hour)))
  const own = [await create(both.token, both.id, 'OWN-0', at(2, 10)), await create(both.token, both.id, 'OWN-1', at(1, 10))]
  t.equal((await h.call('POST', `/api/v1/shipments/${ids[0]}/cancel`, { token: shipper.token })).statusCode, 200)
  t.equal((await h.call('POST', `/api/v1/shipments/${ids[4]}/cancel`, { token: carrier.token })).statusCode, 200)

  const get = async (token: string, query: string) => {
    const res = await h.call('GET', `/api/v1/shipments${query}`, { token })
    t.equal(res.statusCode, 200, res.body)
    return res.json().shipments
  }
  const everything = async (token: string, filter = '') => {
    const page = await get(token, `?perPage=100${filter}`)
    return page.data.map((s: any): Listed => ({ id: s.id, created_at: s.created_at, status: s.status.code, external_reference: s.external_reference }))
  }
  const newestFirst = (a: Listed, b: Listed) => Date.parse(b.created_at) - Date.parse(a.created_at) || b.id - a.id

  t.test('totals are exact with and without each filter, after creates and status changes', async (t) => {
    const all: Listed[] = await everything(shipper.token)
    t.same(all.map((s) => s.id).sort(), [...ids].sort(), 'the shipper lists its seven')
    t.same(all, [...all].sort(newestFirst), 'newest first, the later id first at the same instant')
    t.equal((await get(shipper.token, '')).meta.total, 7)
    t.equal((await get(shipper.token, '?status=cancelled')).meta.total, 2, 'two cancelled: they moved out of pending')
    t.same((await everything(shipper.token, '&status=cancelled')).map((s: Listed) => s.id).sort(), [ids[0], ids[4]].sort())
    t.equal((await get(shipper.token, '?status=pending')).meta.total, 5)
    const both2 = await get(shipper.token, '?status=pending,cancelled&perPage=100')
    t.equal(both2.meta.total, 7)
    t.same(both2.data.map((s: any) => s.id), all.map((s) => s.id), 'several statuses merge in the same order')
    t.equal((await get(carrier.token, '?status=cancelled')).meta.total, 2, 'the carrier counts the same')
    const byRef = await get(shipper.token, '?external_reference=REF-3')
    t.equal(byRef.meta.total, 1)
    t.same(byRef.data.map((s: any) => s.id), [ids[3]])
    t.equal((await get(shipper.token, '?external_reference=REF-3&status=cancelled')).meta.total, 0)

    // Ranges that cut days: whole days from the counts, the cut ones counted through the index.
    const ranges: [Date | undefined, Date | undefined][] = [
      [at(3, 10), at(1, 12)], [at(3, 10), undefined], [undefined, at(2, 9)], [at(2, 0), at(2, 23)], [at(3, 12), at(3, 12)], [at(9, 0), at(8, 0)],
    ]
    for (const [from, to] of ranges) {
      const inRange = (s: Listed) => (!from || Date.parse(s.created_at) >= from.getTime()) && (!to || Date.parse(s.created_at) <= to.getTime())
      const q = `${from ? `&created_from=${from.toISOString()}` : ''}${to ? `&created_to=${to.toISOString()}` : ''}`
      const page = await get(shipper.token, `?perPage=100${q}`)
      t.equal(page.meta.total, all.filter(inRange).length, `total from ${from?.toISOString()} to ${to?.toISOString()}`)
      t.same(page.data.map((s: any) => s.id), all.filter(inRange).map((s) => s.id))
      const cancelled = await get(shipper.token, `?status=cancelled${q}`)
      t.equal(cancelled.meta.total, all.filter((s) => inRange(s) && s.status === 'cancelled').length, 'range and status')
    }
  })

  t.test('each organization lists a shipment once: shipper and carrier each, and one that carries its own', async (t) => {
    const seen = await everything(carrier.token)
    t.same(seen.map((s: Listed) => s.id).sort(), [...ids].sort(), 'the carrier sees the same seven, once each')
    const mine = await get(both.token, '?perPage=100')
    t.equal(mine.meta.total, 2)
    t.same(mine.data.map((s: any) => s.id), [own[1], own[0]], 'shipper and carrier at once: listed once')
  })

  t.test('tenant isolation: another organization\'s shipments never appear', async (t) => {
    const theirs = new Set([...ids])
    t.notOk((await everything(both.token)).some((s: Listed) => theirs.has(s.id)))
    t.notOk((await everything(carrier.token)).some((s: Listed) => own.includes(s.id)), 'the carrier does not see what it does not carry')
    t.equal((await get(nobody.token, '')).meta.total, 0)
    t.same((await get(nobody.token, '?status=pending,cancelled')).data, [])
    // A cursor made from another organization's row seeks in the caller's own rows only.
    const page1 = await get(shipper.token, '?perPage=2')
    const cursor = new URL(page1.links.next).searchParams.get('cursor')!
    const stolen = await get(nobody.token, `?perPage=2&cursor=${cursor}`)
    t.same(stolen.data, [])
  })

  t.test('following links.next returns every shipment once, in order, while new ones are created between pages', async (t) => {
    const expected = (await everything(shipper.token)).map((s: Listed) => s.id)
    const walked: number[] = []
    let url: string | null = '/api/v1/shipments?perPage=2'
    let pages = 0
    while (url) {
      const page: any = await get(shipper.token, url.slice(url.indexOf('?')))
      pages++
      t.equal(page.meta.current_page, pages, 'the cursor carries the page number')
      walked.push(...page.data.map((s: any) => s.id))
      if (page.links.next) t.match(page.links.next, /[?&]cursor=[A-Za-z0-9_-]+/)
      // Newer than every listed one: the cursor walk does not see it, nor repeat a row for it.
      await create(shipper.token, carrier.id, `LATE-${pages}`)
      url = page.links.next
    }
    t.same(walked, expected, 'all seven, each once, newest first')
    t.equal(pages, 4)
    t.equal((await get(shipper.token, '')).meta.total, 7 + pages, 'the late ones counted')
    const bad = await h.call('GET', '/api/v1/shipments?cursor=bm90LWEtY3Vyc29y', { token: shipper.token })
    t.equal(bad.statusCode, 422, 'a cursor this listing did not give')
  })

  t.test('page=N without a cursor equals walking, with and without filters', async (t) => {
    for (const filter of ['', '&status=pending', '&status=pending,cancelled', `&created_from=${at(3, 10).toISOString()}&created_to=${at(1, 12).toISOString()}`]) {
      const all = (await everything(shipper.token, filter)).map((s: Listed) => s.id)
      for (const perPage of [2, 3]) {
        const lastPage = Math.max(1, Math.ceil(all.length / perPage))
        for (let n = 1; n <= lastPage + 1; n++) {
          const page = await get(shipper.token, `?perPage=${perPage}&page=${n}${filter}`)
          t.same(page.data.map((s: any) => s.id), all.slice((n - 1) * perPage, n * perPage), `page ${n} of ${perPage}${filter}`)
          t.equal(page.meta.total, all.length)
          if (n > 1) t.notMatch(page.links.prev, /cursor=/, 'prev is a page number')
        }
      }
    }
  })

  t.test('the migration\'s backfill from shipments equals what the projection wrote', async (t) => {
    const { projected, backfilled } = await backfilledAgain(h.platform.db as Kysely<any>, listingsMigration, ['shipment_listings', 'shipment_listing_counts'])
    t.same(backfilled, projected)
  })

  t.test('many rows over many days: deep pages seek to their day and equal walking; index scans only', async (t) => {
    const db = h.platform.db as Kysely<any>
    const org = 'synthetic-org'
    // 20,000 rows over 40 days, three statuses, pairs of rows at the same instant (the id breaks the tie).
    await sql`insert into read_model.shipment_listings (org_id, shipment_id, status, created_at, external_reference)
      select ${org}, 1000000 + i, (array['pending', 'cancelled', 'delivered'])[1 + i % 3],
        timestamptz '2026-01-01T00:00:00Z' + (i / 2) * interval '346 seconds', case when i % 1000 = 0 then 'SYN-' || i end
      from generate_series(1, 20000) as i`.execute(db)
    await sql`insert into read_model.shipment_listing_counts (org_id, status, day, n)
      select org_id, status, (created_at at time zone 'UTC')::date, count(*) from read_model.shipment_listings
      where org_id = ${org} group by 1, 2, 3`.execute(db)
    await sql`analyze read_model.shipment_listings`.execute(db)
    await sql`analyze read_model.shipment_listing_counts`.execute(db)
    const rm = h.platform.rm
    const walk = async (f: ListingFilters, perPage: number) => {
      const out: number[] = []
      let before
      for (;;) {
        const rows = await listingPage(rm, org, f, before ? { before, skip: 0 } : { skip: 0 }, perPage)
        out.push(...rows.map((r) => r.id))
        if (rows.length < perPage) return out
        before = rows.at(-1)!.key
      }
    }
    const filters: ListingFilters[] = [{}, { status: ['delivered'] }, { status: ['pending', 'cancelled'] },
      { createdFrom: '2026-01-07T13:00:00Z', createdTo: '2026-01-30T07:30:00Z', status: ['pending', 'delivered'] }]
    for (const f of filters) {
      const perPage = 100
      const walked = await walk(f, 500)
      const days = (await listingDays(rm, org, f))!
      t.equal(days.reduce((s, d) => s + d.n, 0), walked.length, `total ${JSON.stringify(f)}`)
      for (const n of [1, 2, 57, Math.ceil(walked.length / perPage)]) {
        const seek = seekToOffset(days, (n - 1) * perPage)!
        const rows = await listingPage(rm, org, f, seek, perPage)
        t.same(rows.map((r) => r.id), walked.slice((n - 1) * perPage, n * perPage), `page ${n} ${JSON.stringify(f)}`)
      }
      t.equal(seekToOffset(days, walked.length), undefined, 'past the end')
    }

    const faults = (plan: unknown) => scanFaults(plan, ['shipment_listings'])
    const planOf = async (f: ListingFilters, offset: number, perPage = 20) => {
      const days = (await listingDays(rm, org, f))!
      return explained(listingPageQuery(rm, org, f, seekToOffset(days, offset)!, perPage + 1))
    }
    for (const f of filters) {
      for (const offset of [0, 19_000 * (f.status?.length ?? 3) / 3 - 100]) {
        const plan = await planOf(f, Math.max(0, Math.floor(offset * (f.createdFrom ? 0.5 : 1))))
        t.same(faults(plan), [], `index scans, no sort over the table: ${JSON.stringify(f)} at ${offset}`)
      }
    }
    const page1 = await planOf({}, 0)
    t.equal(JSON.stringify(page1).includes('"Sort"'), false, 'page 1 without filters: no sort at all')
  })
})
