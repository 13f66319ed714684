import { type Kysely, sql } from 'kysely'
import t from 'tap'
import { build } from '../helpers/build.js'
import { backfilledAgain, planOf, scanFaults } from '../helpers/listing-checks.js'
import { workflowListingDays, workflowPage, workflowPageQuery, type WorkflowFilters } from '../../src/workflows/listing-queries.js'
import { seekToOffset } from '../../src/http/listing-seek.js'
import * as listingsMigration from '../../projections/migrations/2026-11-28T01-20-workflow-listings.js'
import { workflowsWorld } from './fixtures.js'

/**
 * The workflows listing, oldest first (issue 32): exact totals from the kept counts under each
 * filter after starts and cancels, keyset `links.next` while workflows arrive, `page=N` equal to
 * walking, isolation, index scans only (PostgreSQL), and the migration's backfill.
 */

interface Listed { id: number; status: string; blueprint: string; created_at: string }

t.test('workflows listing over its indexes and day counts', async (t) => {
  const h = await build(t)
  const w = await workflowsWorld(h)
  const other = await workflowsWorld(h)
  const ids: number[] = []
  for (let i = 0; i < 7; i++) ids.push((await w.started(i % 3 === 0 ? { blueprint_key: 'delivery', data: { shipment_id: w.shipment.id } } : {})).id)
  const theirs = (await other.started()).id
  for (const id of [ids[1], ids[4]]) t.equal((await h.call('POST', `/api/v1/workflows/${id}/cancel`, { token: w.carrier.token })).statusCode, 200)

  const get = async (token: string, query: string) => {
    const res = await h.call('GET', `/api/v1/workflows${query}`, { token })
    t.equal(res.statusCode, 200, res.body)
    return res.json()
  }
  const everything = async (token: string, filter = ''): Promise<Listed[]> =>
    (await get(token, `?perPage=100${filter}`)).data.map((x: any) => ({ id: x.id, status: x.status, blueprint: x.blueprint.key, created_at: x.created_at }))
  /** The listing once the workflow manager has settled (statuses move on in the background). */
  const settled = async () => {
    let last = ''
    for (let i = 0; i < 50; i++) {
      await h.platform.projections.waitFor(await h.platform.store.headPosition(), 10_000)
      const now = JSON.stringify(await everything(w.carrier.token))
      if (now === last) return JSON.parse(now) as Listed[]
      last = now
      await new Promise((r) => setTimeout(r, 200))
    }
    throw new Error('the workflows did not settle')
  }

  t.test('totals are exact under each filter after starts and cancels', async (t) => {
    const all = await settled()
    t.same(all.map((x) => x.id), ids, 'oldest first')
    t.equal((await get(w.carrier.token, '')).meta.total, 7)
    for (const status of new Set([...all.map((x) => x.status), 'completed'])) {
      const page = await get(w.carrier.token, `?status=${status}&perPage=100`)
      t.equal(page.meta.total, all.filter((x) => x.status === status).length, `total ${status}`)
      t.same(page.data.map((x: any) => x.id), all.filter((x) => x.status === status).map((x) => x.id))
    }
    t.equal((await get(w.carrier.token, '?status=cancelled')).meta.total, 2)
    t.equal((await get(w.carrier.token, '?blueprint_key=pickup-delivery')).meta.total, 4)
    const delivery = await get(w.carrier.token, '?blueprint_key=delivery&perPage=100')
    t.equal(delivery.meta.total, 3)
    t.same(delivery.data.map((x: any) => x.id), [ids[0], ids[3], ids[6]])
    for (const status of new Set(all.map((x) => x.status))) {
      const keep = (x: Listed) => x.blueprint === 'pickup-delivery' && x.status === status
      t.equal((await get(w.carrier.token, `?blueprint_key=pickup-delivery&status=${status}`)).meta.total, all.filter(keep).length, `blueprint and ${status}`)
    }
    t.equal((await get(w.carrier.token, '?blueprint_key=nothing-like-it')).meta.total, 0)
    const linked = await get(w.carrier.token, `?shipment_id=${w.shipment.id}&perPage=100`)
    t.same(linked.data.map((x: any) => x.id), [ids[0], ids[3], ids[6]])
    t.equal(linked.meta.total, 3)
  })

  t.test('tenant isolation', async (t) => {
    t.notOk((await everything(w.carrier.token)).some((x) => x.id === theirs))
    t.same((await everything(other.carrier.token)).map((x) => x.id), [theirs])
  })

  t.test('following links.next returns every workflow once, in order, while workflows arrive', async (t) => {
    const before = (await settled()).map((x) => x.id)
    const walked: number[] = []
    const late: number[] = []
    let url: string | null = '/api/v1/workflows?perPage=3'
    let pages = 0
    while (url && pages < 10) {
      const page: any = await get(w.carrier.token, url.slice(url.indexOf('?')))
      pages++
      t.equal(page.meta.current_page, pages)
      walked.push(...page.data.map((x: any) => x.id))
      if (pages <= 2) late.push((await w.started()).id)
      url = page.links.next
    }
    t.same(walked, [...before, ...late], 'oldest first: the late ones come at the end, once')
    t.equal((await h.call('GET', '/api/v1/workflows?cursor=bm90LWEtY3Vyc29y', { token: w.carrier.token })).statusCode, 422)
  })

  t.test('page=N without a cursor equals walking', async (t) => {
    const all = (await settled()).map((x) => x.id)
    for (const perPage of [2, 3]) {
      for (let n = 1; n <= Math.ceil(all.length / perPage) + 1; n++) {
        const page = await get(w.carrier.token, `?perPage=${perPage}&page=${n}`)
        t.same(page.data.map((x: any) => x.id), all.slice((n - 1) * perPage, n * perPage), `page ${n} of ${perPage}`)
        t.equal(page.meta.total, all.length)
      }
    }
  })

  t.test('the migration\'s backfill from workflows equals what the projection wrote', async (t) => {
    await settled()
    const { projected, backfilled } = await backfilledAgain(h.platform.db as Kysely<any>, listingsMigration, ['workflow_listing_counts'])
    t.same(backfilled, projected)
  })

  t.test('many workflows over many days: deep pages equal walking; index scans only', async (t) => {
    const db = h.platform.db as Kysely<any>
    const orgId = 'synthetic-org'
    await sql`insert into read_model.workflows (id, organization_id, status, blueprint_id, blueprint_key, blueprint_version, data, shipment_id, errors, created_at, updated_at)
      select 1000000 + i, ${orgId}, (array['new', 'in_progress', 'completed'])[1 + i % 3], 1, (array['a', 'b'])[1 + i % 2], 1, '{}',
        case when i % 100 = 0 then 42 end, '[]', ts, ts
      from generate_series(1, 20000) as i, lateral (select timestamptz '2026-01-01T00:00:00Z' + (i / 2) * interval '173 seconds' as ts) x`.execute(db)
    await sql`insert into read_model.workflow_listing_counts (org_id, blueprint_key, status, day, n)
      select organization_id, b, status, (created_at at time zone 'UTC')::date, count(*) from read_model.workflows,
        lateral (values (''), (blueprint_key)) s(b) where organization_id = ${orgId} group by 1, 2, 3, 4`.execute(db)
    await sql`analyze read_model.workflows`.execute(db)
    await sql`analyze read_model.workflow_listing_counts`.execute(db)
    const rm = h.platform.rm
    const walk = async (f: WorkflowFilters) => {
      const out: number[] = []
      let before
      for (;;) {
        const rows = await workflowPage(rm, orgId, f, before ? { before, skip: 0 } : { skip: 0 }, 500)
        out.push(...rows.map((r) => r.id))
        if (rows.length < 500) return out
        before = rows.at(-1)!.key
      }
    }
    const filters: WorkflowFilters[] = [{}, { status: 'completed' }, { blueprint_key: 'b' }, { blueprint_key: 'a', status: 'new' }]
    for (const f of filters) {
      const walked = await walk(f)
      const days = (await workflowListingDays(rm, orgId, f))!
      t.equal(days.reduce((s, d) => s + d.n, 0), walked.length, `total ${JSON.stringify(f)}`)
      for (const n of [1, 2, 17, Math.ceil(walked.length / 100)]) {
        const rows = await workflowPage(rm, orgId, f, seekToOffset(days, (n - 1) * 100, 'asc')!, 100)
        t.same(rows.map((r) => r.id), walked.slice((n - 1) * 100, n * 100), `page ${n} ${JSON.stringify(f)}`)
      }
    }
    for (const f of [...filters, { shipment_id: 42 }]) {
      const days = (await workflowListingDays(rm, orgId, f)) ?? []
      const n = days.reduce((s, d) => s + d.n, 0)
      // Deep: nine tenths in (the last day's few rows may be read by bitmap and sorted: docs/decisions.md).
      for (const offset of [0, Math.floor(n * 0.9)]) {
        const seek = days.length ? seekToOffset(days, offset, 'asc')! : { skip: 0 }
        t.same(scanFaults(await planOf(workflowPageQuery(rm, orgId, f, seek, 21)), ['workflows']), [], `index scans, no sort over the table: ${JSON.stringify(f)} at ${offset}`)
      }
    }
  })
})
