import t, { type Test } from 'tap'
import { build } from '../helpers/build.js'

/**
 * The small per-organization listings flat (issue 32): users, vehicles, blueprints and webhooks.
 * Each one's meta.total is exact under each filter after creates, changes and deletes (and the
 * kept counts equal a recount), walking links.next returns each row once in (created_at, id) order,
 * page=N returns what walking does, and another organization's rows never show.
 */

t.test('users, vehicles, blueprints and webhooks: exact totals, cursor walks, page=N, isolation', async (t) => {
  const h = await build(t)
  const org = await h.createOrganization({ roles: ['carrier'] })
  const other = await h.createOrganization({ roles: ['carrier'] })
  const call = (method: string, url: string, body?: object, token = org.token) => h.call(method, `/api/v1${url}`, { token, body })
  const ok = async (method: string, url: string, body?: object, token = org.token) => {
    const res = await call(method, url, body, token)
    t.ok(res.statusCode < 300, `${method} ${url}: ${res.body}`)
    return res.json()
  }
  const list = async (url: string, token = org.token) => {
    const res = await call('GET', url, undefined, token)
    t.equal(res.statusCode, 200, res.body)
    return res.json()
  }
  const total = async (url: string, token = org.token) => (await list(url, token)).meta.total

  /** Every row through links.next from page 1, checking meta.from on each page. */
  async function walk(url: string, perPage: number): Promise<string[]> {
    const ids: string[] = []
    let next: string | null = `${url}${url.includes('?') ? '&' : '?'}perPage=${perPage}`
    while (next) {
      const page = await list(next.replace(/^.*\/api\/v1/, ''))
      if (page.data.length) t.equal(page.meta.from, ids.length + 1, 'meta.from counts the rows before the page')
      ids.push(...page.data.map((r: { id: string | number }) => String(r.id)))
      next = page.links.next
    }
    return ids
  }
  /** Every row by page numbers 1..last_page. */
  async function byPages(url: string, perPage: number): Promise<string[]> {
    const ids: string[] = []
    const sep = url.includes('?') ? '&' : '?'
    const first = await list(`${url}${sep}perPage=${perPage}`)
    for (let p = 1; p <= first.meta.last_page; p++) {
      ids.push(...(await list(`${url}${sep}perPage=${perPage}&page=${p}`)).data.map((r: { id: string | number }) => String(r.id)))
    }
    return ids
  }
  /** The listing's order: oldest first, ties by id. */
  const inOrder = (rows: { id: string | number; created_at: string }[]) =>
    [...rows].sort((a, b) => a.created_at.localeCompare(b.created_at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((r) => String(r.id))
  async function checkWalks(t: Test, url: string, expected: string[]) {
    const walked = await walk(url, 3)
    t.same(walked, expected, `${url}: walking links.next gives each row once, in order`)
    t.same(await byPages(url, 3), walked, `${url}: page=N equals walking`)
    t.equal(await total(url), expected.length, `${url}: meta.total`)
  }

  t.test('users', async (t) => {
    const made: string[] = []
    for (let i = 0; i < 7; i++) {
      made.push((await ok('POST', '/users', { name: `User ${i}`, email: `u${i}@example.com`, role: i % 3 === 0 ? 'dispatcher' : 'driver' })).user.id)
    }
    await ok('POST', '/users', { name: 'Elsewhere', email: 'x@example.com', role: 'driver' }, other.token)
    await ok('PATCH', `/users/${made[1]}`, { role: 'dispatcher' })
    await ok('PATCH', `/users/${made[2]}`, { name: 'Renamed' })
    await ok('POST', `/users/${made[4]}/deactivate`)
    const all: { id: string; created_at: string; role: string; status: string }[] = (await list('/users?perPage=100')).data
    t.equal(all.length, 7, 'the other organization\'s user is not listed')
    for (const [q, keep] of [
      ['', () => true],
      ['role=dispatcher', (u: typeof all[0]) => u.role === 'dispatcher'],
      ['role=driver', (u: typeof all[0]) => u.role === 'driver'],
      ['status=deactivated', (u: typeof all[0]) => u.status === 'deactivated'],
      ['role=driver&status=active', (u: typeof all[0]) => u.role === 'driver' && u.status === 'active'],
    ] as const) {
      await checkWalks(t, `/users${q ? `?${q}` : ''}`, inOrder(all.filter(keep)))
    }
    t.equal(await total('/users?role=dispatcher'), 4, 'three made so and one by its role change')
    t.equal(await total('/users?status=deactivated'), 1)
    t.equal(await total('/users', other.token), 1, 'the other organization counts its own')
    const kept = await h.platform.rm.selectFrom('user_listing_counts').select(['role', 'status', 'n']).where('organization_id', '=', org.id).orderBy('role').orderBy('status').execute()
    const recount = await h.platform.rm.selectFrom('users').select(['role', 'status', (eb) => eb.fn.countAll<string>().as('n')]).where('organization_id', '=', org.id)
      .groupBy(['role', 'status']).orderBy('role').orderBy('status').execute()
    t.same(kept.map((r) => [r.role, r.status, Number(r.n)]), recount.map((r) => [r.role, r.status, Number(r.n)]), 'the kept counts equal a recount (no row at zero)')
  })

  t.test('vehicles', async (t) => {
    for (let i = 0; i < 7; i++) await ok('POST', '/vehicles', { name: `Van ${i}`, plate: `AB-${100 + i}`, capacity: { packages: 10 } })
    await ok('POST', '/vehicles', { name: 'Elsewhere', plate: 'ZZ-1', capacity: { packages: 1 } }, other.token)
    const all = (await list('/vehicles?perPage=100')).data
    t.equal(all.length, 7)
    await ok('PATCH', `/vehicles/${all[0].id}`, { name: 'Renamed' })
    await checkWalks(t, '/vehicles', inOrder(all))
    t.equal(await total('/vehicles', other.token), 1)
  })

  t.test('webhooks', async (t) => {
    const made: string[] = []
    for (let i = 0; i < 6; i++) made.push((await ok('POST', '/webhooks', { url: `http://127.0.0.1:9/hooks/${i}`, events: ['task.*'] })).webhook.id)
    await ok('POST', '/webhooks', { url: 'http://127.0.0.1:9/other', events: ['task.*'] }, other.token)
    t.equal((await call('DELETE', `/webhooks/${made[2]}`)).statusCode, 200)
    t.equal((await call('DELETE', `/webhooks/${made[2]}`)).statusCode, 404, 'deleting twice counts once')
    const all = (await list('/webhooks?perPage=100')).data
    t.same(all.map((w: { id: string }) => w.id).sort(), made.filter((id) => id !== made[2]).sort(), 'live webhooks only')
    await checkWalks(t, '/webhooks', inOrder(all))
    t.equal(await total('/webhooks', other.token), 1)
  })

  t.test('blueprints', async (t) => {
    const steps = [{ key: 'drop', name: 'Drop', task: { type: 'delivery', address: 'destination' }, on_complete: [{ do: 'complete_workflow' }] }]
    const made: number[] = []
    for (let i = 0; i < 5; i++) made.push((await ok('POST', '/blueprints', { key: `bp-${i}`, name: `Blueprint ${i}`, steps, start_steps: ['drop'] })).blueprint.id)
    await ok('POST', `/blueprints/${made[0]}/publish`)
    await ok('POST', `/blueprints/${made[1]}/publish`)
    await ok('PUT', `/blueprints/${made[1]}`, { name: 'Blueprint 1 v2', steps, start_steps: ['drop'] })
    const all: { id: number; created_at: string; status: string; key: string }[] = (await list('/blueprints?perPage=100')).data
    t.equal(all.length, 7, 'five made and the two defaults')
    for (const [q, keep] of [
      ['', () => true],
      ['status=draft', (b: typeof all[0]) => b.status === 'draft'],
      ['status=published', (b: typeof all[0]) => b.status === 'published'],
      ['key=bp-3', (b: typeof all[0]) => b.key === 'bp-3'],
      ['key=bp-0&status=draft', () => false],
    ] as const) {
      await checkWalks(t, `/blueprints${q ? `?${q}` : ''}`, inOrder(all.filter(keep)))
    }
    t.equal(await total('/blueprints?status=published'), 3, 'the defaults and bp-0; bp-1 went back to a draft')
    t.equal(await total('/blueprints', other.token), 2, 'the other organization: its defaults')
  })

  t.test('a cursor of another kind is refused', async (t) => {
    const res = await call('GET', '/vehicles?cursor=bm9wZQ')
    t.equal(res.statusCode, 422, res.body)
  })
})
