import { sql } from 'kysely'
import t, { type Test } from 'tap'
import { abandoned, errorBody, listening, readsRunning, sleep, sleeps, waitFor, type Server } from './fixtures/listening.js'

/**
 * Nothing runs on after its client gave up (issue 32 point 2), through a listening server and Node's
 * fetch: a listing's statements cut by REQUEST_STATEMENT_TIMEOUT_MS (503), cancelled when the client
 * disconnects, and slow listings that never hold up the other requests.
 */

const SLEEP = '%pg_sleep%'

const address = (city: string) => ({ name: 'Ana Gómez', street: 'San Martín', street_number: '50', city, state: 'Santa Fe', country: 'AR' })

/** A shipper with one shipment: an empty listing answers from its counts without reading a row. */
async function shipperWithShipment(t: Test, s: Server): Promise<{ token: string }> {
  const carrier = await s.createOrganization({ roles: ['carrier'], currency: 'ARS' })
  const shipper = await s.createOrganization({ roles: ['shipper'], currency: 'ARS' })
  await s.signContract(carrier.id, shipper.id)
  const res = await s.call('POST', '/api/v1/shipments', {
    token: shipper.token,
    body: { carrier_id: carrier.id, origin: address('Rosario'), destination: address('Santa Fe'), packages: [{ grams: 500, length: 10, width: 10, height: 10 }] },
  })
  t.equal(res.statusCode, 201, 'a shipment')
  return shipper
}

/**
 * Holds an ACCESS EXCLUSIVE lock on the shipments read model until the returned function is called:
 * the organization's real listing then waits in PostgreSQL as a slow one would, no trigger needed.
 */
async function lockShipments(s: Server): Promise<() => Promise<void>> {
  const locker = s.platform.database.dedicated('test-locker', 1)
  let unlock = () => {}
  const released = new Promise<void>((r) => { unlock = r })
  let locked = () => {}
  const holding = new Promise<void>((r) => { locked = r })
  const done = locker.connection().execute(async (c) => {
    await sql`begin`.execute(c)
    await sql`lock table read_model.shipments in access exclusive mode`.execute(c)
    locked()
    await released
    await sql`rollback`.execute(c)
  })
  await holding
  return async () => { unlock(); await done }
}

t.test('a read past REQUEST_STATEMENT_TIMEOUT_MS is cancelled and answered 503 with Retry-After', async (t) => {
  const s = await listening(t, { requestStatementTimeoutMs: 500 })
  const started = Date.now()
  // Bounded, so that a server without the timeout fails here instead of hanging the file for 30 s.
  const res = await fetch(`${s.base}/test/sleep?seconds=30`, { signal: AbortSignal.timeout(5000) })
  const elapsed = Date.now() - started
  const body = errorBody(await res.json())
  t.equal(res.status, 503, JSON.stringify(body))
  t.equal(body.code, 'statement_timeout')
  t.match(body.message, /statement timeout 500 ms/, 'the message names the timeout')
  t.equal(res.headers.get('retry-after'), '1', 'Retry-After')
  t.ok(elapsed >= 450 && elapsed < 3000, `answered after about the timeout (${elapsed} ms)`)
  t.equal(await readsRunning(s, SLEEP), 0, 'nothing runs on in the database')
})

t.test('the organization\'s shipments listing, held up in PostgreSQL, is cut at the timeout', async (t) => {
  const s = await listening(t, { requestStatementTimeoutMs: 500 })
  const org = await shipperWithShipment(t, s)
  const auth = { authorization: `Bearer ${org.token}` }
  t.equal((await fetch(`${s.base}/api/v1/shipments`, { headers: auth })).status, 200, 'the listing answers when nothing holds it up')
  const unlock = await lockShipments(s)
  t.teardown(unlock)
  const started = Date.now()
  const res = await fetch(`${s.base}/api/v1/shipments`, { headers: auth, signal: AbortSignal.timeout(5000) })
  const elapsed = Date.now() - started
  t.equal(res.status, 503, 'cut by the timeout')
  t.equal(errorBody(await res.json()).code, 'statement_timeout')
  t.ok(elapsed < 3000, `after about the timeout (${elapsed} ms)`)
  t.equal(await readsRunning(s, '%shipments%'), 0, 'nothing waits on in the database')
  await unlock()
})

t.test('a client that disconnects has its running read cancelled in PostgreSQL', async (t) => {
  // A timeout far beyond the test: only the cancel can end the statement in time.
  const s = await listening(t, { requestStatementTimeoutMs: 120_000 })
  t.test('a slow statement', async (t) => {
    const before = sleeps.ended
    const ac = new AbortController()
    const request = abandoned(`${s.base}/test/sleep?seconds=30`, ac.signal)
    t.ok(await waitFor(async () => (await readsRunning(s, SLEEP)) === 1, 5000) !== undefined, 'the sleep runs')
    await sleep(200)
    ac.abort()
    t.equal(await request, 'gave up')
    const gone = await waitFor(async () => (await readsRunning(s, SLEEP)) === 0, 1000)
    t.ok(gone !== undefined, `the sleep stopped within 1 s of the disconnect (${gone} ms)`)
    t.equal(sleeps.ended, before, 'it was cut, not ended')
    t.equal((await fetch(`${s.base}/test/sleep?seconds=0`)).status, 200, 'the pool serves the next request')
  })
  t.test('the organization\'s shipments listing', async (t) => {
    const org = await shipperWithShipment(t, s)
    const unlock = await lockShipments(s)
    t.teardown(unlock)
    const ac = new AbortController()
    const request = abandoned(`${s.base}/api/v1/shipments`, ac.signal, { authorization: `Bearer ${org.token}` })
    t.ok(await waitFor(async () => (await readsRunning(s, '%shipments%')) === 1, 5000) !== undefined, 'the listing waits in PostgreSQL')
    await sleep(200)
    ac.abort()
    t.equal(await request, 'gave up')
    const gone = await waitFor(async () => (await readsRunning(s, '%shipments%')) === 0, 1000)
    t.ok(gone !== undefined, `its statement stopped within 1 s of the disconnect (${gone} ms)`)
    await unlock()
  })
  t.end()
})

t.test('slow listings never hold up the other requests', async (t) => {
  t.test('the others are served while slow reads fill their pool, and the pool frees when clients give up', async (t) => {
    const s = await listening(t, { requestStatementTimeoutMs: 120_000 })
    const org = await s.createOrganization()
    const auth = { authorization: `Bearer ${org.token}` }
    // More slow reads than the reads pool has connections (10 in tests), as a load tester's would be.
    const ac = new AbortController()
    const slow = Array.from({ length: 20 }, () => abandoned(`${s.base}/test/sleep?seconds=30`, ac.signal))
    t.ok(await waitFor(async () => (await readsRunning(s, SLEEP)) >= 10, 5000) !== undefined, 'the sleeps fill the reads pool')
    const timed = async (what: string, go: () => Promise<Response>, status: number) => {
      const started = Date.now()
      const res = await go().catch((err: unknown) => err)
      const elapsed = Date.now() - started
      t.ok(res instanceof Response && res.status === status, `${what}: ${res instanceof Response ? res.status : String(res)}`)
      t.ok(elapsed < 1000, `${what}: promptly (${elapsed} ms)`)
    }
    await timed('the organization', () => fetch(`${s.base}/api/v1/organizations/my`, { headers: auth, signal: AbortSignal.timeout(10_000) }), 200)
    await timed('a write', () => fetch(`${s.base}/api/v1/organizations/my/places`, {
      method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, signal: AbortSignal.timeout(10_000),
      body: JSON.stringify({ name: 'Depot', street: 'Ruta 9', street_number: 'km 5', city: 'Córdoba', state: 'Córdoba', country: 'AR' }),
    }), 201)
    ac.abort()
    t.same(new Set(await Promise.all(slow)), new Set(['gave up']))
    await timed('a listing once their clients gave up', () => fetch(`${s.base}/api/v1/shipments`, { headers: auth, signal: AbortSignal.timeout(10_000) }), 200)
    t.ok(await waitFor(async () => (await readsRunning(s, SLEEP)) === 0, 1000) !== undefined, 'no abandoned sleep still runs')
  })

  t.test('clients that wait are answered 503 at the timeout, and a listing after them meanwhile', async (t) => {
    const s = await listening(t, { requestStatementTimeoutMs: 1000 })
    const org = await s.createOrganization()
    const slow = Array.from({ length: 20 }, () => fetch(`${s.base}/test/sleep?seconds=30`, { signal: AbortSignal.timeout(10_000) }).then((r) => r.status, () => 0))
    t.ok(await waitFor(async () => (await readsRunning(s, SLEEP)) >= 5, 5000) !== undefined, 'the sleeps run')
    const started = Date.now()
    const res = await fetch(`${s.base}/api/v1/shipments`, { headers: { authorization: `Bearer ${org.token}` }, signal: AbortSignal.timeout(10_000) })
      .catch((err: unknown) => err)
    const elapsed = Date.now() - started
    t.ok(res instanceof Response && res.status === 200, `the listing answers (${res instanceof Response ? res.status : String(res)})`)
    // Twenty sleeps on ten connections: two rounds of the timeout at most before a connection is free.
    t.ok(elapsed < 4000, `within two rounds of the timeout, not the sleeps' 30 s (${elapsed} ms)`)
    t.same(new Set(await Promise.all(slow)), new Set([503]), 'every slow request answered 503')
  })
  t.end()
})
