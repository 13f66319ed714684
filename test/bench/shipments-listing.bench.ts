// GET /api/v1/shipments (the organization's listing, issue 32 point 1) at 10k and 1M shipments of
// one organization: first page, the deepest page by `page=`, a page by `links.next`'s cursor, and
// with several statuses. One connection through inject (latency, not throughput: the 1M growth
// bench with 50 connections is test/bench's other one). Run on PostgreSQL:
// TEST_DB=postgres TEST_DATABASE_URL=postgres://… npx tsx test/bench/shipments-listing.bench.ts
// BENCH_SMALL=10000 BENCH_LARGE=1000000 BENCH_REQUESTS=200. Rows are generated with SQL straight
// into the read model (shipments, then shipment_listings and its counts as the migration's backfill
// derives them), spread over 365 days, the organization as shipper of them all.
import { sql } from 'kysely'
import { build } from '../helpers/build.js'

const SMALL = Number(process.env['BENCH_SMALL'] ?? 10_000)
const LARGE = Number(process.env['BENCH_LARGE'] ?? 1_000_000)
const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 200)
const teardowns: (() => unknown)[] = []
const t = { teardown: (fn: () => unknown) => { teardowns.push(fn) } }
const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! }

async function main() {
  const h = await build(t, { rateLimitPerMinute: 100_000_000 })
  const shipper = await h.createOrganization({ roles: ['shipper'] })
  // The generated rows are not in the log: nothing may project over them from here on.
  await h.platform.projections.stop()
  const db = h.platform.db
  await sql`insert into read_model.addresses (id, organization_id, name, street, street_number, created_at)
    values ('adr_o', ${shipper.id}, 'Origin', 'Street', '1', now()), ('adr_d', ${shipper.id}, 'Dest', 'Street', '2', now())`.execute(db)

  // Creation times spread evenly over 365 days whatever the size: a day holds size/365 rows.
  const fill = async (from: number, to: number, size: number) => {
    const started = performance.now()
    const step = (365 * 86_400) / size
    for (let lo = from; lo <= to; lo += 100_000) {
      const hi = Math.min(to, lo + 99_999)
      await sql`
        insert into read_model.shipments (id, ulid, control_number, integration, shipper_id, shipper_internal_id, shipper_name, shipper_subdomain,
          carrier_id, carrier_internal_id, carrier_name, carrier_subdomain, status, substatus, carrier_phase,
          origin_address_id, destination_address_id, total_packages, total_grams, total_cm3, declared_value, is_public, requires_pickup,
          created_at, updated_at, stream_version, change_seq, feed_watermark)
        select g, 'ULID' || g, 'C' || (g % 100000), 'custom', ${shipper.id}, 1, 'Shipper', 'shipper',
          'org_c', 2, 'Carrier', 'carrier', (array['pending', 'in_transit', 'delivered', 'cancelled'])[1 + g % 4], null, 'processing',
          'adr_o', 'adr_d', 1, 1000, 1000, 0, false, false,
          timestamptz '2025-01-01' + g * ${step}::float8 * interval '1 second', now(), 1, g, now()
        from generate_series(${lo}::bigint, ${hi}::bigint) g`.execute(db)
    }
    await sql`delete from read_model.shipment_listings`.execute(db)
    await sql`delete from read_model.shipment_listing_counts`.execute(db)
    await sql`insert into read_model.shipment_listings (org_id, shipment_id, status, created_at, external_reference)
      select shipper_id, id, status, created_at, external_reference from read_model.shipments
      union all select carrier_id, id, status, created_at, external_reference from read_model.shipments where carrier_id <> shipper_id`.execute(db)
    await sql`insert into read_model.shipment_listing_counts (org_id, status, day, n)
      select org_id, status, (created_at at time zone 'UTC')::date, count(*) from read_model.shipment_listings group by 1, 2, 3`.execute(db)
    for (const table of ['shipments', 'shipment_listings', 'shipment_listing_counts']) await sql`vacuum analyze ${sql.id('read_model', table)}`.execute(db)
    return (performance.now() - started) / 1000
  }

  const get = async (url: string) => {
    const s = performance.now()
    const res = await h.call('GET', url, { token: shipper.token })
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
    return { ms: performance.now() - s, body: res.json() }
  }

  const measure = async (label: string, total: number) => {
    const last = Math.ceil(total / 20)
    const second = (await get('/api/v1/shipments?perPage=20')).body.shipments.links.next as string
    const scenarios: [string, string][] = [
      ['first page', '/api/v1/shipments?perPage=20'],
      ['deepest page=', `/api/v1/shipments?perPage=20&page=${last}`],
      ['middle page=', `/api/v1/shipments?perPage=20&page=${Math.ceil(last / 2)}`],
      ['links.next', second.slice(second.indexOf('/api/'))],
      ['2 statuses, deep', `/api/v1/shipments?perPage=20&status=pending,cancelled&page=${Math.ceil(last / 2) - 1}`],
      ['created range', `/api/v1/shipments?perPage=20&created_from=2025-03-01T12:00:00Z&created_to=2025-06-01T12:00:00Z`],
    ]
    const out: Record<string, { p50: number; p99: number }> = {}
    for (const [name, url] of scenarios) {
      for (let i = 0; i < 20; i++) await get(url)
      const times: number[] = []
      let page: any
      for (let i = 0; i < REQUESTS; i++) { const r = await get(url); times.push(r.ms); page = r.body.shipments }
      out[name] = { p50: pct(times, 50), p99: pct(times, 99) }
      console.log(`${label.padEnd(6)} ${String(total).padStart(8)}  ${name.padEnd(18)} p50 ${pct(times, 50).toFixed(2)} ms  p99 ${pct(times, 99).toFixed(2)} ms  (total ${page.meta.total}, ${page.data.length} on page ${page.meta.current_page})`)
    }
    return out
  }

  console.log(`GET /api/v1/shipments, ${REQUESTS} requests per scenario through inject, db=${process.env['TEST_DB'] === 'postgres' ? 'postgres' : 'pglite'}`)
  console.log(`filled ${SMALL} in ${(await fill(1, SMALL, SMALL)).toFixed(1)} s`)
  const small = await measure('small', SMALL)
  await sql`delete from read_model.shipments`.execute(db)
  console.log(`filled ${LARGE} in ${(await fill(1, LARGE, LARGE)).toFixed(1)} s`)
  const large = await measure('large', LARGE)
  for (const name of Object.keys(small)) {
    console.log(`${name.padEnd(18)} large/small p50 ×${(large[name]!.p50 / small[name]!.p50).toFixed(2)}  p99 ×${(large[name]!.p99 / small[name]!.p99).toFixed(2)}  (goal p99 ≤ 50 ms: ${large[name]!.p99 <= 50 ? 'met' : 'NOT met'})`)
  }
  for (const fn of teardowns.reverse()) await fn()
}

await main()
