import t from 'tap'
import { build } from '../helpers/build.js'
import { secondConnection } from '../helpers/test-database.js'
import { createPlatform } from '../../src/platform.js'
import { buildApp } from '../../src/http/app.js'
import { modules } from '../../src/modules.js'
import { listen, openSse } from '../routes/progress/fixtures.js'

// A tracking stream held by one API process follows changes made through another (on PostgreSQL:
// separate connections, runners and hubs; the change notices travel by NOTIFY). The link one
// process makes opens on the other (one SECRETS_KEY).

t.test('a change made through a second API process reaches a tracking stream held by the first', async (t) => {
  const h = await build(t, { sseHeartbeatMs: 60_000 })
  const base = await listen(h.app)
  const database = await secondConnection(t, h.platform.database as typeof h.platform.database & { url?: string })
  const second = await createPlatform(h.platform.config, { database })
  const app2 = await buildApp(second, { logger: false, modules })
  t.teardown(async () => { await app2.close(); await second.close() })
  const via2 = (method: string, url: string, token: string, payload?: unknown) =>
    app2.inject({ method: method as 'POST', url, headers: { authorization: `Bearer ${token}`, accept: 'application/json' }, ...(payload !== undefined ? { payload: payload as object } : {}) })

  const carrier = await h.createOrganization({ roles: ['carrier'] })
  const shipper = await h.createOrganization({ roles: ['shipper'] })
  await h.signContract(carrier.id, shipper.id)
  const address = { name: 'Ana', street: 'S', street_number: '1', city: 'Rosario', state: 'Santa Fe', country: 'AR' }
  const made = await via2('POST', '/api/v1/shipments', shipper.token, { carrier_id: carrier.id, is_public: true, origin: address, destination: address, packages: [{ grams: 1, length: 1, width: 1, height: 1 }] })
  t.equal(made.statusCode, 201, made.body)
  const shipment = JSON.parse(made.body).shipment
  const path = new URL(shipment.public_tracking_url).pathname

  const stream = await openSse(`${base}${path}/stream`, { 'accept-language': 'en' })
  t.teardown(() => stream.close())
  t.equal(stream.status, 200, 'a link made by the second process opens on the first')
  const views = () => stream.events.filter((e) => e.event === 'tracking').map((e) => JSON.parse(e.data!))
  await stream.until(() => views().length === 1)
  t.equal(views()[0].status.code, 'pending')

  t.equal((await via2('PATCH', '/api/v1/shipment-statuses/pending', carrier.token, { name: 'Waiting for pickup' })).statusCode, 200)
  await stream.until(() => views().at(-1)?.status.name === 'Waiting for pickup', 15_000)
  t.equal((await via2('POST', `/api/v1/shipments/${shipment.id}/cancel`, shipper.token, { reason: 'changed my mind' })).statusCode, 200)
  await stream.until(() => views().at(-1)?.status.code === 'cancelled', 15_000)
  t.equal(views().at(-1).final, true)
  t.match(views().at(-1).timeline[0], { code: 'pending', name: 'Waiting for pickup' }, 'the timeline in the carrier\'s names')
  t.notOk(stream.body.includes('changed my mind'), 'the cancellation reason (free text) is not shown')
})
