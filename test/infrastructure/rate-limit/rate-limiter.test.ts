import { sql } from 'kysely'
import t, { type Test } from 'tap'
import type { RateLimiter } from '../../../src/infrastructure/rate-limit/rate-limiter.js'
import { InProcessRateLimiter } from '../../../src/infrastructure/rate-limit/in-process-rate-limiter.js'
import { leaseSize, PostgresRateLimiter } from '../../../src/infrastructure/rate-limit/postgres-rate-limiter.js'
import { openTestDatabase } from '../../helpers/test-database.js'

const db = await openTestDatabase(t)

const T0 = Date.parse('2026-11-24T10:00:00Z')
const at = (ms: number) => new Date(T0 + ms)

function contract(t: Test, make: () => RateLimiter) {
  t.test('a fresh bucket holds the whole limit; an empty one refuses until a token has refilled', async (t) => {
    const limiter = make()
    const taken = []
    for (let i = 0; i < 11; i++) taken.push(await limiter.take('tok_a', 10, at(0)))
    t.same(taken.slice(0, 10).map((x) => x.allowed && x.remaining), [9, 8, 7, 6, 5, 4, 3, 2, 1, 0])
    // 10 a minute: one token every 6 s.
    t.same(taken[10], { allowed: false, retryAfterSeconds: 6 })
    t.same(await limiter.take('tok_b', 10, at(0)), { allowed: true, remaining: 9 }, 'each bucket has its own budget')

    t.equal((await limiter.take('tok_a', 10, at(5_900))).allowed, false, '0.98 of a token is not one')
    t.same(await limiter.take('tok_a', 10, at(6_000)), { allowed: true, remaining: 0 }, 'one token after 6 s')
    t.equal((await limiter.take('tok_a', 10, at(6_000))).allowed, false)
    t.same(await limiter.take('tok_a', 10, at(36_000)), { allowed: true, remaining: 4 }, 'five tokens after 30 s, one taken')
    t.same(await limiter.take('tok_a', 10, at(3_600_000)), { allowed: true, remaining: 9 }, 'never more than the limit')
    t.same(await limiter.take('tok_a', 10, at(3_500_000)), { allowed: true, remaining: 8 }, 'a clock behind the bucket refills nothing')
  })

  t.test('idle buckets are forgotten, which is the same as a full bucket', async (t) => {
    const limiter = make()
    for (let i = 0; i < 10; i++) await limiter.take('tok_idle', 10, at(0))
    await limiter.take('tok_busy', 10, at(100_000))
    await limiter.forgetIdle(at(119_000))
    t.equal((await limiter.take('tok_idle', 10, at(119_000))).allowed, true, 'full again after two minutes, forgotten or not')
    await limiter.forgetIdle(at(240_000))
    t.same(await limiter.take('tok_idle', 10, at(240_000)), { allowed: true, remaining: 9 })
  })
}

t.test('in process', async (t) => contract(t, () => new InProcessRateLimiter()))

t.test('in PostgreSQL', async (t) => {
  contract(t, () => new PostgresRateLimiter(db.db))

  t.test('forgetting idle buckets deletes their rows', async (t) => {
    const limiter = new PostgresRateLimiter(db.db)
    await sql`delete from rate_limit_buckets`.execute(db.db)
    await limiter.take('tok_old', 10, at(0))
    await limiter.take('tok_recent', 10, at(60_000))
    await limiter.forgetIdle(at(150_000))
    const rows = await sql<{ bucket: string }>`select bucket from rate_limit_buckets order by bucket`.execute(db.db)
    t.same(rows.rows.map((r) => r.bucket), ['tok_recent'])
  })

  t.test('concurrent takes never hand out more than the limit', async (t) => {
    const limiter = new PostgresRateLimiter(db.db)
    const all = await Promise.all(Array.from({ length: 30 }, () => limiter.take('tok_race', 10, at(0))))
    t.equal(all.filter((x) => x.allowed).length, 10)
  })

  t.test('requests spend leased tokens in memory: a write per chunk, not per request', async (t) => {
    const limiter = new PostgresRateLimiter(db.db)
    const limit = 6000
    t.equal(leaseSize(limit), 120)
    for (let i = 0; i < 100; i++) t.equal((await limiter.take('tok_lease', limit, at(0))).allowed, true)
    await new Promise((r) => setTimeout(r, 100)) // the prefetched chunk lands
    const row = (await sql<{ tokens: number }>`select tokens from rate_limit_buckets where bucket = 'tok_lease'`.execute(db.db)).rows[0]!
    t.equal(Number(row.tokens), limit - 2 * 120, 'two leases for 100 requests: the first, and the next one fetched before it was needed')
    t.same(await limiter.take('tok_lease', limit, at(0)), { allowed: true, remaining: limit - 101 }, 'remaining counts the process\'s own tokens and the shared bucket')
  })

  t.test('two processes share one budget: never more than the limit, at most a chunk less', async (t) => {
    const a = new PostgresRateLimiter(db.db)
    const b = new PostgresRateLimiter(db.db)
    const limit = 600
    let allowed = 0
    for (let i = 0; i < 700; i++) if ((await (i % 2 ? a : b).take('tok_shared', limit, at(0))).allowed) allowed++
    t.ok(allowed <= limit, `${allowed} allowed of a limit of ${limit}`)
    t.ok(allowed >= limit - leaseSize(limit), `${allowed}: short by at most the chunk the other process holds`)
    t.equal((await a.take('tok_shared', limit, at(50))).allowed, false, 'an empty shared bucket is refused from memory until its next token is due')
    t.equal((await a.take('tok_shared', limit, at(100_000))).allowed, true, 'and refills by the time elapsed')
  })
})
