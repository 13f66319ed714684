import t from 'tap'
import { sql } from 'kysely'
import { build } from '../helpers/build.js'
import { tasksWorld } from '../tasks/fixtures.js'
import { prunePositions } from '../../src/positions/positions-table.js'

// DESIGN §3.10: positions are a driver's telemetry: reported in batches by its own token, checked
// item by item, stored with one statement, read back by the organization and its dispatchers only.

const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString()
const pos = (over: Record<string, unknown> = {}) => ({ lat: -32.95, lng: -60.65, recorded_at: at(1000), ...over })

t.test('positions: reported by a driver, read by the organization', async (t) => {
  const h = await build(t)
  const w = await tasksWorld(h)
  const report = (body: unknown, token = w.driver.token) => h.call('POST', '/api/v1/drivers/me/positions', { token, body })
  const read = (userId: string, query = '', token = w.carrier.token) => h.call('GET', `/api/v1/users/${userId}/positions${query}`, { token })

  t.test('a batch: 202 {accepted, received_at}; one row per position, in one statement', async (t) => {
    const res = await report({ positions: [pos({ recorded_at: at(20_000) }), pos({ lat: -32.94, recorded_at: at(10_000), accuracy_m: 5, speed_kmh: 31.5, heading: 350 })] })
    t.equal(res.statusCode, 202, res.body)
    t.equal(res.json().accepted, 2)
    t.ok(Math.abs(Date.parse(res.json().received_at) - Date.now()) < 5000)
    const list = await read(w.driver.id)
    t.equal(list.statusCode, 200, list.body)
    t.match(list.json().data, [{ lat: -32.95, lng: -60.65, accuracy_m: null }, { lat: -32.94, accuracy_m: 5, speed_kmh: 31.5, heading: 350 }], 'oldest first')
    t.match(list.json().meta, { limit: 1000, has_more: false })
    const one = await read(w.driver.id, '?limit=1')
    t.equal(one.json().data.length, 1)
    t.equal(one.json().meta.has_more, true, 'more in the range')
    const dispatcher = await read(w.driver.id, '', w.dispatcher.token)
    t.equal(dispatcher.statusCode, 200, 'a dispatcher reads them as the organization does')
    const old = await read(w.driver.id, `?from=${encodeURIComponent(at(3600_000 * 3))}&to=${encodeURIComponent(at(3600_000 * 2))}`)
    t.same(old.json().data, [], 'none in that range')
    const reversed = await read(w.driver.id, `?from=${encodeURIComponent(at(0))}&to=${encodeURIComponent(at(3600_000))}`)
    t.equal(reversed.statusCode, 422)
    t.ok(reversed.json().errors.from)
  })

  t.test('bad input: a 422 naming every failing item', async (t) => {
    const res = await report({
      positions: [
        pos(), pos({ lat: 91 }), pos({ lng: -181, accuracy_m: -1 }), pos({ recorded_at: at(25 * 3600_000) }), pos({ recorded_at: at(-5 * 60_000) }),
        pos({ recorded_at: 'yesterday' }), { lng: 1, recorded_at: at(0) }, pos({ heading: 400, speed_kmh: 'fast', extra: 1 }),
      ],
    })
    t.equal(res.statusCode, 422, res.body)
    t.same(Object.keys(res.json().errors).sort(), [
      'positions.1.lat', 'positions.2.accuracy_m', 'positions.2.lng', 'positions.3.recorded_at', 'positions.4.recorded_at', 'positions.5.recorded_at',
      'positions.6.lat', 'positions.7.extra', 'positions.7.heading', 'positions.7.speed_kmh',
    ])
    t.match(res.json().errors['positions.3.recorded_at'], [/too old/])
    t.match(res.json().errors['positions.4.recorded_at'], [/future/])
    const many = await report({ positions: Array.from({ length: 501 }, () => pos()) })
    t.equal(many.statusCode, 422)
    t.match(many.json().errors.positions, [/more than 500/])
    t.equal((await report({ positions: [] })).statusCode, 422, 'at least one')
    t.equal((await report({})).statusCode, 422)
    const stored = await sql<{ n: number }>`select count(*)::int as n from driver_positions where driver_id = ${w.driver.id}`.execute(h.platform.db)
    t.equal(Number(stored.rows[0]!.n), 2, 'nothing of a refused batch is stored')
  })

  t.test('a range it cannot read: a 422 naming from and to, never a 500 or a nameless 422', async (t) => {
    const cases: [string, string[]][] = [
      // Year 0 passes the date-time format; the server must say which parameter it refused.
      ['?from=0000-01-01T00:00:00Z', ['from']],
      [`?from=0000-01-01T00:00:00Z&to=${encodeURIComponent(at(0))}`, ['from']],
      ['?to=0000-01-01T00:00:00Z', ['to']],
      ['?from=0000-01-01T00:00:00Z&to=0000-01-01T01:00:00Z', ['from', 'to']],
      // A leap second passes the format too, but is no instant JavaScript can hold.
      ['?from=2016-12-31T23:59:60Z', ['from']],
      ['?from=2016-12-31T20:59:60-03:00&to=2016-12-31T23:59:60Z', ['from', 'to']],
    ]
    for (const [query, names] of cases) {
      const res = await read(w.driver.id, query.replace(/\+/g, '%2B'))
      t.equal(res.statusCode, 422, `${query}: ${res.body}`)
      t.same(Object.keys(res.json().errors ?? {}).sort(), names, `${query}: names ${names.join(' and ')}`)
    }
    const earliest = await read(w.driver.id, `?from=0001-01-01T00:00:00Z&to=${encodeURIComponent(at(0))}`)
    t.equal(earliest.statusCode, 200, `from the year 1: ${earliest.body}`)
    // The same rule for every date-time field, a body's too.
    const leap = await report({ positions: [pos({ recorded_at: '2016-12-31T23:59:60Z' }), pos({ recorded_at: '0000-01-01T00:00:00Z' })] })
    t.equal(leap.statusCode, 422, leap.body)
    t.same(Object.keys(leap.json().errors ?? {}).sort(), ['positions.0.recorded_at', 'positions.1.recorded_at'])
  })

  t.test('who: a dispatcher\'s or the organization\'s token is 403, whatever it sends; a driver cannot read positions', async (t) => {
    for (const token of [w.dispatcher.token, w.carrier.token]) {
      const res = await report({ positions: [pos({ lat: 500 })] }, token)
      t.equal(res.statusCode, 403, res.body)
      t.equal(res.json().code, 'driver_token_required')
    }
    t.equal((await read(w.driver.id, '', w.driver.token)).statusCode, 403, 'drivers read no one\'s positions')
    const shipper = await h.call('POST', '/api/v1/drivers/me/positions', { token: w.shipper.token, body: { positions: [pos()] } })
    t.equal(shipper.statusCode, 403, 'a shipper-only organization has no drivers')
    t.equal((await h.call('POST', '/api/v1/drivers/me/positions', { body: { positions: [pos()] } })).statusCode, 401)
  })

  t.test('another organization: its users\' positions are 404; ours are not its', async (t) => {
    const other = await h.createOrganization({ roles: ['carrier'] })
    t.equal((await read(w.driver.id, '', other.token)).statusCode, 404)
    t.equal((await read('usr_nobody', '')).statusCode, 404)
  })

  t.test('a deactivated driver\'s token is 401', async (t) => {
    const res = await h.call('POST', '/api/v1/users', { token: w.carrier.token, body: { name: 'Gone Driver', email: `gone-${Date.now()}@example.com`, role: 'driver' } })
    const gone = res.json()
    t.equal((await report({ positions: [pos()] }, gone.access_token)).statusCode, 202)
    t.equal((await h.call('POST', `/api/v1/users/${gone.user.id}/deactivate`, { token: w.carrier.token })).statusCode, 200)
    t.equal((await report({ positions: [pos()] }, gone.access_token)).statusCode, 401)
    t.equal((await read(gone.user.id)).json().data.length, 1, 'what it reported stays readable')
  })

  t.test('pruning: positions received before the retention are deleted, the rest kept', async (t) => {
    await sql`update driver_positions set received_at = now() - interval '8 days' where driver_id = ${w.driver.id} and lat = -32.94`.execute(h.platform.db)
    const pruned = await prunePositions(h.platform.db, new Date(Date.now() - 7 * 86_400_000))
    t.equal(pruned, 1)
    const left = await sql<{ n: number }>`select count(*)::int as n from driver_positions where driver_id = ${w.driver.id}`.execute(h.platform.db)
    t.equal(Number(left.rows[0]!.n), 1)
  })
})

t.test('a flood of positions from one driver is rate limited like every other call', async (t) => {
  const h = await build(t, { rateLimitPerMinute: 5 })
  const w = await tasksWorld(h)
  const codes: number[] = []
  let retryAfter: string | undefined
  for (let i = 0; i < 8; i++) {
    const res = await h.call('POST', '/api/v1/drivers/me/positions', { token: w.driver.token, body: { positions: [pos()] } })
    codes.push(res.statusCode)
    if (res.statusCode === 409) retryAfter = res.headers['retry-after'] as string
  }
  t.same(codes.slice(0, 5), [202, 202, 202, 202, 202])
  t.ok(codes.slice(5).every((c) => c === 409), `then 409 (${codes})`)
  t.match(retryAfter, /^\d+$/)
})
