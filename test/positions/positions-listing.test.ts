import t from 'tap'
import { sql } from 'kysely'
import { build } from '../helpers/build.js'
import { planOf, scanFaults } from '../helpers/listing-checks.js'
import { tasksWorld } from '../tasks/fixtures.js'
import { driverPositionsQuery } from '../../src/positions/positions-table.js'

/**
 * `GET /users/{id}/positions` flat (issue 32): pages in (recorded_at, id) order, walked by asking
 * again from the last `recorded_at` (the shape's own way: no cursor in it) cover every position,
 * only the caller's organization's rows are read, and the query is one index range with no sort
 * (PostgreSQL).
 */

/** Every plan node's type, and the indexes it reads. */
const nodeTypes = (node: any): string[] => [node['Node Type'], ...(node.Plans ?? []).flatMap(nodeTypes)]
const indexes = (node: any): string[] => [...(node['Index Name'] ? [node['Index Name']] : []), ...(node.Plans ?? []).flatMap(indexes)]

t.test('a driver\'s positions: seek, order, walk, isolation', async (t) => {
  const h = await build(t)
  const w = await tasksWorld(h)
  const other = await h.createOrganization({ roles: ['carrier'] })
  const db = h.platform.db
  const base = Date.now() - 50 * 60_000
  // 3,000 positions of the driver over 45 minutes, every tenth instant shared by two positions
  // (the id orders them); each one's lat names it. Another driver's beside them.
  await sql`insert into driver_positions (organization_id, driver_id, lat, lng, recorded_at, received_at)
    select ${w.carrier.id}, ${w.driver.id}, i / 100000.0, 0, to_timestamp(${base / 1000}::float8 + (i - i % 10 / 9) * 0.9), now()
    from generate_series(1, 3000) as i`.execute(db)
  await sql`insert into driver_positions (organization_id, driver_id, lat, lng, recorded_at, received_at)
    select ${w.carrier.id}, 'usr_someone_else', -i / 100000.0, 0, to_timestamp(${base / 1000}::float8 + i * 0.9), now()
    from generate_series(1, 3000) as i`.execute(db)
  const reference = (await sql<{ lat: number }>`select lat from driver_positions where driver_id = ${w.driver.id} order by recorded_at, id`.execute(db)).rows.map((r) => Number(r.lat))
  t.equal(reference.length, 3000)
  const read = async (query: string, token = w.carrier.token) => {
    const res = await h.call('GET', `/api/v1/users/${w.driver.id}/positions${query}`, { token })
    t.equal(res.statusCode, 200, res.body)
    return res.json()
  }

  t.test('pages walked from the last recorded_at give every position once, in the old order', async (t) => {
    const seen: number[] = []
    let from = new Date(base - 60_000).toISOString()
    const to = new Date().toISOString()
    for (let pages = 0; ; pages++) {
      t.ok(pages < 20, 'the walk ends')
      const page = await read(`?limit=400&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`)
      t.same(page.meta, { from, to, limit: 400, has_more: page.meta.has_more }, 'meta as before: from, to, limit, has_more')
      // `from` is inclusive: the positions at the last instant come again; the client keeps new ones.
      for (const p of page.data) if (!seen.includes(p.lat)) seen.push(p.lat)
      if (!page.meta.has_more) break
      from = page.data.at(-1).recorded_at
    }
    t.same(seen, reference, 'each position once, by (recorded_at, id)')
  })

  t.test('only the caller\'s organization\'s rows are read', async (t) => {
    // A row under another organization with this driver's id (no API writes one): never listed.
    await sql`insert into driver_positions (organization_id, driver_id, lat, lng, recorded_at, received_at)
      values (${other.id}, ${w.driver.id}, 89.5, 0, ${new Date(base + 60_000)}::timestamptz, now())`.execute(db)
    const page = await read(`?limit=10000&from=${encodeURIComponent(new Date(base - 60_000).toISOString())}`)
    t.equal(page.data.length, 3000)
    t.notOk(page.data.some((p: { lat: number }) => p.lat === 89.5), 'the other organization\'s row is not listed')
    const theirs = await h.call('GET', `/api/v1/users/${w.driver.id}/positions`, { token: other.token })
    t.equal(theirs.statusCode, 404, 'another organization does not know the driver')
    const rows = await driverPositionsQuery(db, other.id, w.driver.id, new Date(base - 60_000), new Date(), 10).execute()
    t.same(rows.map((r: { lat: unknown }) => Number(r.lat)), [89.5], 'the query reads one organization\'s rows only')
  })

  t.test('one index range, no sort, first and deep pages (PostgreSQL)', async (t) => {
    // Many drivers' positions, so that reading the table would show.
    await sql`insert into driver_positions (organization_id, driver_id, lat, lng, recorded_at, received_at)
      select ${w.carrier.id}, 'usr_d' || (i % 50), 0, 0, to_timestamp(${base / 1000}::float8 + i * 0.05), now()
      from generate_series(1, 60000) as i`.execute(db)
    await sql`analyze driver_positions`.execute(db)
    for (const [label, from] of [['first', base - 60_000], ['deep', base + 40 * 60_000]] as const) {
      const plan = await planOf(driverPositionsQuery(db, w.carrier.id, w.driver.id, new Date(from), new Date(), 100))
      t.same(scanFaults(plan, ['driver_positions']), [], `${label}: index scans only`)
      t.notOk(nodeTypes(plan).some((n) => /Sort/.test(n)), `${label}: the index gives the order, no sort (${nodeTypes(plan).join(' > ')})`)
      // A page as large as most of its range may be read as a bitmap of that range and sorted (the
      // planner's choice at this size): still the driver's range of the index, never the table.
      const whole = await planOf(driverPositionsQuery(db, w.carrier.id, w.driver.id, new Date(from), new Date(), 1000))
      t.notOk(nodeTypes(whole).includes('Seq Scan'), `${label}, limit 1000: no table scan (${nodeTypes(whole).join(' > ')})`)
      t.same([...new Set(indexes(whole))], ['driver_positions_driver_seek_idx'], `${label}, limit 1000: the driver's range of the index`)
    }
  })
})
