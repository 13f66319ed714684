// GET /carrier/v1/shipments page latency with 1M shipments vs 10k (issue 5 §7, goal ≤ 1.2×).
// Run on PostgreSQL: TEST_DB=postgres TEST_DATABASE_URL=postgres://… npx tsx test/bench/carrier-feed.bench.ts
// BENCH_SMALL=10000 BENCH_LARGE=1000000 BENCH_REQUESTS=300.
// Rows are generated with SQL straight into the read model (one in ten belongs to the measured
// carrier), first the small table, measured, then grown to the large one and measured again:
// the baseline is the same run, same database, same process.
import { sql } from 'kysely'
import { build } from '../helpers/build.js'

const SMALL = Number(process.env['BENCH_SMALL'] ?? 10_000)
const LARGE = Number(process.env['BENCH_LARGE'] ?? 1_000_000)
const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 300)
const teardowns: (() => unknown)[] = []
const t = { teardown: (fn: () => unknown) => { teardowns.push(fn) } }
const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! }

async function main() {
  const h = await build(t, { rateLimitPerMinute: 100_000_000 })
  const org = await h.createOrganization({ roles: ['carrier'], carriers_enabled: true })
  const made = (await h.call('POST', '/api/v1/carriers', { token: org.token, body: { name: 'Feed', integration: 'custom', visibility: 'private' } })).json()
  // The generated rows are not in the log: nothing may project over them from here on.
  await h.platform.projections.stop()
  const carrierId: string = made.carrier.id
  const key: string = made.api_key
  const db = h.platform.db

  await sql`insert into read_model.addresses (id, organization_id, name, street, street_number, city_id, city_name, country_id, country_iso, country_name, created_at)
    values ('adr_o', 'org_s', 'Origin', 'Street', '1', 1, 'City', 11, 'AR', 'Argentina', now()), ('adr_d', 'org_s', 'Dest', 'Street', '2', 1, 'City', 11, 'AR', 'Argentina', now())`.execute(db)

  const fill = async (from: number, to: number) => {
    const started = performance.now()
    for (let lo = from; lo <= to; lo += 100_000) {
      const hi = Math.min(to, lo + 99_999)
      await sql`
        insert into read_model.shipments (id, ulid, control_number, integration, shipper_id, shipper_internal_id, shipper_name, shipper_subdomain,
          carrier_id, carrier_internal_id, carrier_name, carrier_subdomain, carrier_hub_id, service_type_id, service_type_name, status, substatus, carrier_phase,
          origin_address_id, destination_address_id, total_packages, total_grams, total_cm3, declared_value, is_public, requires_pickup,
          created_at, updated_at, stream_version, change_seq, feed_watermark)
        select g, 'ULID' || g, 'C' || (g % 100000), 'custom', 'org_s', 1, 'Shipper', 'shipper',
          'org_c', 2, 'Carrier', 'carrier', case when g % 10 = 0 then ${carrierId} else 'car_other' || (g % 97) end, 1, 'Standard', 'pending', 'processing', 'processing',
          'adr_o', 'adr_d', 1, 1000, 1000, 0, false, false,
          timestamptz '2026-01-01' + g * interval '1 second', timestamptz '2026-01-01' + g * interval '1 second', 1, g,
          timestamptz '2026-01-01' + g * interval '1 second'
        from generate_series(${lo}::bigint, ${hi}::bigint) g`.execute(db)
      await sql`
        insert into read_model.shipment_packages (shipment_id, id, position, ulid, shipper_id, carrier_id, reused, label_code, grams, weight_unit,
          length_cm, length_unit, width_cm, width_unit, height_cm, height_unit, is_flammable, is_corrosive, is_fragile, declared_value_amount, created_at)
        select g, g, 0, 'PKG' || g, 'org_s', 'org_c', false, 'L' || g, 1000, 'g', 10, 'cm', 10, 'cm', 10, 'cm', false, false, false, 0, now()
        from generate_series(${lo}::bigint, ${hi}::bigint) g`.execute(db)
    }
    // A live table is vacuumed by autovacuum; measure that steady state, not the bulk load's aftermath.
    await sql`vacuum analyze read_model.shipments`.execute(db)
    await sql`vacuum analyze read_model.shipment_packages`.execute(db)
    return (performance.now() - started) / 1000
  }

  const get = async (url: string) => {
    const s = performance.now()
    const res = await h.call('GET', url, { token: key })
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
    return { ms: performance.now() - s, body: res.json() }
  }

  const measure = async (label: string, total: number) => {
    const own = Math.floor(total / 10)
    // A cursor halfway through the carrier's feed, and one at its end (a caught-up poller).
    const middle = Buffer.from(JSON.stringify([Math.floor(total / 2), null])).toString('base64url')
    const end = Buffer.from(JSON.stringify([total, null])).toString('base64url')
    const scenarios: [string, string][] = [
      ['first page', '/carrier/v1/shipments?limit=20'],
      ['page at the middle', `/carrier/v1/shipments?limit=20&cursor=${middle}`],
      ['updated_since page', `/carrier/v1/shipments?limit=20&updated_since=${new Date(Date.parse('2026-01-01') + (total / 2) * 1000).toISOString()}`],
      ['caught-up poll', `/carrier/v1/shipments?limit=20&cursor=${end}`],
    ]
    if (process.env['BENCH_EXPLAIN']) {
      const plan = await sql<{ 'QUERY PLAN': string }>`explain (analyze, buffers) select s.id, s.change_seq from read_model.shipments s
        where s.carrier_hub_id = ${carrierId} and s.change_seq > ${Math.floor(total / 2)} order by s.change_seq limit 20`.execute(db)
      console.log(plan.rows.map((r) => r['QUERY PLAN']).join('\n'))
    }
    const out: Record<string, { p50: number; p99: number }> = {}
    for (const [name, url] of scenarios) {
      for (let i = 0; i < 20; i++) await get(url)
      const times: number[] = []
      let n = 0
      for (let i = 0; i < REQUESTS; i++) { const r = await get(url); times.push(r.ms); n = r.body.data.length }
      out[name] = { p50: pct(times, 50), p99: pct(times, 99) }
      console.log(`${label.padEnd(6)} ${String(total).padStart(8)} rows (${own} own)  ${name.padEnd(20)} p50 ${pct(times, 50).toFixed(2)} ms  p99 ${pct(times, 99).toFixed(2)} ms  (${n} per page)`)
    }
    return out
  }

  console.log(`GET /carrier/v1/shipments, ${REQUESTS} requests per scenario through inject, db=${process.env['TEST_DB'] === 'postgres' ? 'postgres' : 'pglite'}`)
  console.log(`filled ${SMALL} rows in ${(await fill(1, SMALL)).toFixed(1)} s`)
  const small = await measure('small', SMALL)
  console.log(`grew to ${LARGE} rows in ${(await fill(SMALL + 1, LARGE)).toFixed(1)} s`)
  const large = await measure('large', LARGE)
  for (const name of Object.keys(small)) {
    const r50 = large[name]!.p50 / small[name]!.p50
    const r99 = large[name]!.p99 / small[name]!.p99
    console.log(`${name.padEnd(20)} large/small p50 ×${r50.toFixed(2)}  p99 ×${r99.toFixed(2)}  (goal ≤ 1.2×: ${r50 <= 1.2 ? 'met' : 'NOT met'})`)
  }
  for (const fn of teardowns.reverse()) await fn()
}

await main()
