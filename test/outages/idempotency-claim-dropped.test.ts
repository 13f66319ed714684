// A claim on an Idempotency-Key whose INSERT committed while its connection dropped before the
// answer (a restart between the commit and the reply): the request answers 503, and nobody holds
// the claim. It must not leave the key "in progress" until it counts as abandoned (minutes): a
// retry with the same key creates the shipment within seconds, once. A real socket is cut here, by
// a TCP proxy between the API and PostgreSQL, right after the server answered that INSERT.
import t from 'tap'
import { sql } from 'kysely'
import { build } from '../helpers/build.js'
import { tcpProxy } from '../helpers/tcp-proxy.js'
import { createScratchDatabase } from '../helpers/test-database.js'
import { openDatabase } from '../../src/infrastructure/database/connection.js'

/** Forwards to `target`; once armed, the connection that sends an INSERT into idempotency_keys is cut right after the server's answer (not forwarded). */
async function cuttingProxy(target: URL) {
  let armed = false
  let cuts = 0
  const cutOnAnswer = new WeakSet<object>()
  const proxy = await tcpProxy(target, {
    fromClient(chunk, send, conn) {
      if (armed && chunk.includes('insert into "idempotency_keys"')) { armed = false; cutOnAnswer.add(conn.client) }
      send(chunk)
    },
    fromServer(chunk, send, conn) {
      if (!cutOnAnswer.has(conn.client)) { send(chunk); return }
      // The server answered after its commit (at Sync); a moment more, to be sure, then cut both ends.
      cuts++
      setTimeout(conn.cut, 100)
    },
  })
  return {
    ...proxy,
    arm() { armed = true },
    get cuts() { return cuts },
  }
}

t.test('a claim committed as its connection dropped is released: the retry succeeds in seconds', async (t) => {
  const target = new URL(await createScratchDatabase(t))
  const proxy = await cuttingProxy(target)
  t.teardown(() => proxy.close())
  const database = await openDatabase({ url: proxy.url, poolSize: 10, connectTimeoutMs: 2000 })
  const h = await build(t, {}, {}, { database })
  const shipper = await h.createOrganization({ roles: ['shipper'] })
  const carrier = await h.createOrganization({ roles: ['carrier'] })
  await h.signContract(carrier.id, shipper.id)
  const place = (name: string) => ({ name, street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR' })
  const body = { carrier_id: carrier.id, origin: place('Depot'), destination: place('Ana'), packages: [{ grams: 500, length: 10, width: 10, height: 10 }] }
  const create = () => h.call('POST', '/api/v1/shipments', { token: shipper.token, body, headers: { 'idempotency-key': 'key-cut' } })
  const claim = () => h.platform.db.selectFrom('idempotency_keys').select(['status_code']).where('key', '=', 'key-cut').executeTakeFirst()
  const shipments = async () => Number((await sql<{ n: string }>`select count(*) as n from es_events where type = 'ShipmentCreated'`.execute(h.platform.db)).rows[0]!.n)

  proxy.arm()
  const first = await create()
  t.equal(proxy.cuts, 1, 'the connection was cut after the server answered the claim')
  t.equal(first.statusCode, 503, `the request answers 503: ${first.body}`)
  t.equal(first.json().code, 'database_unavailable')
  t.equal(first.headers['retry-after'], '1')
  t.ok(await claim(), 'the claim had committed')
  t.equal(await shipments(), 0, 'nothing was created')

  const started = Date.now()
  const answers: number[] = []
  let created: { statusCode: number; json(): any } | undefined
  while (Date.now() - started < 10_000) {
    const r = await create()
    answers.push(r.statusCode)
    if (r.statusCode === 201) { created = r; break }
    t.equal(r.statusCode, 409, 'meanwhile the key is in progress')
    await new Promise((r) => setTimeout(r, 200))
  }
  t.ok(created, `a retry created the shipment within 10 s (answers: ${answers.join(', ')})`)
  t.comment(`201 after ${Date.now() - started} ms`)
  t.equal(await shipments(), 1, 'created once')
  const replay = await create()
  t.equal(replay.headers['idempotent-replayed'], 'true')
  t.equal(replay.json().shipment.id, created?.json().shipment.id, 'the replay answers the same shipment')
})
