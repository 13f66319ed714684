// A creation retried with its Idempotency-Key after an answer that failed once the command had
// committed (the database dropped the connection between the commit and the response): the retry
// must find the shipment, not create a second one (issue 33, point 1).
import t from 'tap'
import { sql } from 'kysely'
import { build } from '../../helpers/build.js'

t.test('POST /shipments retried after a failure that came after its commit', async (t) => {
  const h = await build(t)
  const shipper = await h.createOrganization({ roles: ['shipper'] })
  const carrier = await h.createOrganization({ roles: ['carrier'] })
  await h.signContract(carrier.id, shipper.id)
  const place = (name: string) => ({ name, street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR' })
  const body = { carrier_id: carrier.id, origin: place('Depot'), destination: place('Ana'), packages: [{ grams: 500, length: 10, width: 10, height: 10 }] }
  const create = (key: string) => h.call('POST', '/api/v1/shipments', { token: shipper.token, body, headers: { 'idempotency-key': key } })
  const scope = `org:${shipper.id}`
  const created = async () => (await sql<{ id: number }>`select (data->>'id')::int as id from es_events where type = 'ShipmentCreated' order by 1`.execute(h.platform.db)).rows.map((r) => r.id)
  const claimOf = (key: string) => h.platform.db.selectFrom('idempotency_keys').selectAll().where('scope', '=', scope).where('key', '=', key).executeTakeFirstOrThrow()

  t.test('the first try committed, its answer failed: the retry answers that shipment', async (t) => {
    const first = await create('key-committed')
    t.equal(first.statusCode, 201, first.body)
    const id = first.json().shipment.id as number
    const [event] = (await sql<{ event_id: string }>`select event_id::text from es_events where type = 'ShipmentCreated' and (data->>'id')::int = ${id}`.execute(h.platform.db)).rows
    // What a 503 after the commit leaves behind: the claim failed (-1), still holding its event id,
    // which is the ShipmentCreated's.
    await h.platform.db.updateTable('idempotency_keys').set({ status_code: -1, response_body: event!.event_id }).where('scope', '=', scope).where('key', '=', 'key-committed').execute()
    const before = await created()
    const retry = await create('key-committed')
    t.equal(retry.statusCode, 201, retry.body)
    t.equal(retry.json().shipment.id, id, 'the shipment of the first try')
    t.same(await created(), before, 'nothing created again')
    t.equal((await claimOf('key-committed')).status_code, 201, 'the claim now keeps the answer')
    const replay = await create('key-committed')
    t.equal(replay.headers['idempotent-replayed'], 'true')
    t.equal(replay.json().shipment.id, id)
  })

  t.test('the first try failed before its commit: the retry creates it, under the claim\'s event id', async (t) => {
    const eventId = '6f1c1d3e-2f57-4a0e-9f55-0b5a8f3b2c11'
    // The request's hash (method, path and body, not the key) from another key sent with the same body.
    t.equal((await create('key-same-body')).statusCode, 201)
    const { request_hash } = await claimOf('key-same-body')
    // A claim whose try answered 5xx and appended nothing.
    await h.platform.db.insertInto('idempotency_keys')
      .values({ scope, key: 'key-failed', request_hash, status_code: -1, response_body: eventId, created_at: new Date() }).execute()
    const before = await created()
    const retry = await create('key-failed')
    t.equal(retry.statusCode, 201, retry.body)
    t.equal((await created()).length, before.length + 1, 'created once')
    const [row] = (await sql<{ id: number }>`select (data->>'id')::int as id from es_events where event_id = ${eventId}::uuid`.execute(h.platform.db)).rows
    t.equal(row?.id, retry.json().shipment.id, 'its ShipmentCreated carries the claim\'s event id')
  })

  t.test('a claim still in progress: 409 with Retry-After', async (t) => {
    const first = await create('key-busy')
    t.equal(first.statusCode, 201)
    await h.platform.db.updateTable('idempotency_keys').set({ status_code: 0, response_body: '' }).where('scope', '=', scope).where('key', '=', 'key-busy').execute()
    const busy = await create('key-busy')
    t.equal(busy.statusCode, 409)
    t.equal(busy.json().code, 'idempotency_in_progress')
    t.equal(busy.headers['retry-after'], '1')
  })
})
