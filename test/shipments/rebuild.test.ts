import { type Kysely, sql } from 'kysely'
import t from 'tap'
import { rebuildReadModels } from '../../src/cli/rebuild.js'
import { readModelChecksums } from '../helpers/read-model-checksums.js'
import { build } from '../helpers/build.js'

const TABLES = ['shipments', 'shipment_packages', 'addresses', 'shipment_status_history', 'shipment_attachments', 'shipment_status_catalog', 'shipment_listings', 'shipment_listing_counts']
const address = { name: 'Ana', street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR' }

const checksums = (db: Kysely<any>) => readModelChecksums(db, TABLES)

t.test('rebuilding the shipment read models from the log gives the same rows, change_seq included', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ roles: ['carrier'] })
  const shipper = await h.createOrganization({ roles: ['shipper'] })
  await h.signContract(carrier.id, shipper.id)
  const ids: number[] = []
  for (let i = 0; i < 4; i++) {
    const res = await h.call('POST', '/api/v1/shipments', {
      token: shipper.token,
      body: { carrier_id: carrier.id, origin: address, destination: { ...address, name: `R${i}` }, packages: [{ original_weight: i + 1, weight_unit: 'kg', length: 10, width: 10, height: 10 }] },
    })
    t.equal(res.statusCode, 201, res.body)
    ids.push(res.json().shipment.id)
  }
  t.equal((await h.call('POST', `/api/v1/shipments/${ids[0]}/ready`, { token: shipper.token })).statusCode, 200)
  t.equal((await h.call('POST', `/api/v1/shipments/${ids[1]}/cancel`, { token: carrier.token })).statusCode, 200)
  t.equal((await h.call('GET', `/api/v1/shipments/${ids[2]}/label?format=zpl`, { token: shipper.token })).statusCode, 200)
  t.equal((await h.call('PATCH', '/api/v1/shipment-statuses/pending', { token: shipper.token, body: { color: '#000000' } })).statusCode, 200)
  t.equal((await h.call('POST', `/api/v1/shipments/${ids[0]}/ready`, { token: shipper.token })).statusCode, 200)

  const db = h.platform.db as Kysely<any>
  const before = await checksums(db)
  await rebuildReadModels({ database: h.platform.database, store: h.platform.store, batchSize: 3 })
  t.equal(await h.platform.projections.waitFor(await h.platform.store.headPosition(), 10_000), true)
  t.same(await checksums(db), before, 'same rows in every shipment table')
  const after = await h.call('GET', `/api/v1/shipments/${ids[1]}`, { token: shipper.token })
  t.equal(after.json().status.code, 'cancelled')
})
