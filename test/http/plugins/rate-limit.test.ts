import t, { type Test } from 'tap'
import { buildApp } from '../../../src/http/app.js'
import { modules } from '../../../src/modules.js'
import type { Config } from '../../../src/config.js'
import type { DatabaseHandle } from '../../../src/infrastructure/database/connection.js'
import { createPlatform } from '../../../src/platform.js'
import { ADMIN_TOKEN, build } from '../../helpers/build.js'
import { secondConnection } from '../../helpers/test-database.js'

// One database for the whole file; each test has its own tokens,
// and its API processes a clock of their own, so that a slow machine refills nothing.
const h = await build(t)

/** An API process on the test database: its own connections when `database` is not given. */
async function apiProcess(t: Test, opts: { clock: () => Date; config: Partial<Config>; database?: DatabaseHandle }) {
  const platform = await createPlatform({ ...h.platform.config, ...opts.config }, {
    database: opts.database ?? await secondConnection(t, h.platform.database), clock: opts.clock, startProjections: false,
  })
  const app = await buildApp(platform, { logger: false, modules })
  t.teardown(async () => { await app.close(); await platform.close() })
  return (token: string, url = '/api/v1/organizations/my', method: 'GET' | 'POST' = 'GET') =>
    app.inject({ method, url, headers: { authorization: `Bearer ${token}` } })
}

t.test('per-token rate limit: 409 with Retry-After', async (t) => {
  const org = await h.createOrganization()
  const second = (await h.admin('POST', `/organizations/${org.id}/tokens`)).json().access_token as string
  const now = new Date()
  const call = await apiProcess(t, { clock: () => now, config: { rateLimitPerMinute: 3 }, database: h.platform.database })

  for (let i = 0; i < 3; i++) t.equal((await call(org.token)).statusCode, 200, `call ${i + 1} of 3`)
  const limited = await call(org.token)
  t.equal(limited.statusCode, 409)
  t.same(limited.json(), { message: limited.json().message, code: 'rate_limited' })
  t.equal(limited.headers['retry-after'], '20', 'one token refills in 60 / 3 s')

  t.equal((await call(second)).statusCode, 200, 'another token of the same organization has its own budget')
  for (let i = 0; i < 5; i++) t.equal((await call(ADMIN_TOKEN, '/admin/v1/organizations/org_missing/suspend', 'POST')).statusCode, 404, 'the admin token is not limited')

  t.equal((await call(second, '/api/v1/organizations/my/contracts?perPage=0')).statusCode, 422)
  t.equal((await call(second)).statusCode, 200)
  t.equal((await call(second)).statusCode, 409, 'invalid requests count too')
})

t.test('two API processes share one budget per token (PostgreSQL); the embedded database keeps it in process', async (t) => {
  const org = await h.createOrganization()
  const now = new Date()
  const a = await apiProcess(t, { clock: () => now, config: { rateLimitPerMinute: 10 }, database: h.platform.database })
  if (h.platform.database.kind !== 'postgres') {
    // One process per embedded database: its own bucket still limits.
    t.equal(h.platform.rateLimiter.kind, 'in-process')
    const statuses = []
    for (let i = 0; i < 11; i++) statuses.push((await a(org.token)).statusCode)
    t.same(statuses, [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 409])
    return
  }
  const b = await apiProcess(t, { clock: () => now, config: { rateLimitPerMinute: 10 } })
  const answers = []
  for (let i = 0; i < 11; i++) answers.push(await (i % 2 === 0 ? a : b)(org.token))
  t.same(answers.map((r) => r.statusCode), [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 409], 'exactly 10 in total, alternating between the processes')
  t.same(answers.map((r) => r.headers['x-ratelimit-remaining']), ['9', '8', '7', '6', '5', '4', '3', '2', '1', '0', '0'])
  t.same(answers.map((r) => r.headers['x-ratelimit-limit']), Array(11).fill('10'))
  const limited = answers[10]!
  t.equal(limited.json().code, 'rate_limited')
  t.equal(limited.headers['retry-after'], '6', 'one token refills in 60 / 10 s')
  t.equal((await b(org.token)).statusCode, 409, 'the other process refuses too')
})

t.test('the budget refills with time (the platform clock)', async (t) => {
  const org = await h.createOrganization()
  let now = Date.parse('2026-11-24T10:00:00Z')
  const my = await apiProcess(t, { clock: () => new Date(now), config: { rateLimitPerMinute: 10 }, database: h.platform.database })

  for (let i = 0; i < 10; i++) t.equal((await my(org.token)).statusCode, 200)
  t.equal((await my(org.token)).statusCode, 409)
  now += 5_900
  t.equal((await my(org.token)).statusCode, 409, 'not yet a whole token')
  now += 100
  const refilled = await my(org.token)
  t.equal(refilled.statusCode, 200, 'one token after 6 s')
  t.equal(refilled.headers['x-ratelimit-remaining'], '0')
  t.equal((await my(org.token)).statusCode, 409)
  now += 60_000
  t.equal((await my(org.token)).headers['x-ratelimit-remaining'], '9', 'full again after a minute')
})

t.test('RATE_LIMIT_PER_MINUTE=0 disables the limit', async (t) => {
  const org = await h.createOrganization()
  const my = await apiProcess(t, { clock: () => new Date(), config: { rateLimitPerMinute: 0 }, database: h.platform.database })
  for (let i = 0; i < 12; i++) {
    const r = await my(org.token)
    t.equal(r.statusCode, 200)
    t.equal(r.headers['x-ratelimit-limit'], undefined)
  }
})
