import { type Kysely, sql } from 'kysely'
import t from 'tap'
import { rebuildReadModels } from '../../src/cli/rebuild.js'
import { readModelChecksums } from '../helpers/read-model-checksums.js'
import { build } from '../helpers/build.js'
import { sampleRates } from '../tariffs/fixtures/sample-rates.js'

const TABLES = ['carriers', 'carrier_secrets', 'service_types', 'access_tokens', 'tariffs']

const checksums = (db: Kysely<any>) => readModelChecksums(db, TABLES)

t.test('carrier and tariff read models are rebuilt from events alone, row for row', async (t) => {
  const h = await build(t)
  const org = await h.createOrganization({ roles: ['carrier'], carriers_enabled: true })
  const a = (await h.call('POST', '/api/v1/carriers', { token: org.token, body: { name: 'A', integration: 'custom', visibility: 'public', service_types: [{ code: 'x', name: 'X' }] } })).json()
  const b = (await h.call('POST', '/api/v1/carriers', { token: org.token, body: { name: 'B', integration: 'service_routes', visibility: 'private' } })).json()
  await h.admin('POST', `/carriers/${a.carrier.id}/certification`, { status: 'certified' })
  await h.call('PATCH', `/api/v1/carriers/${b.carrier.id}`, { token: org.token, body: { name: 'B2', visibility: 'public' } })
  await h.call('POST', `/api/v1/carriers/${a.carrier.id}/keys`, { token: org.token })
  await h.call('POST', `/api/v1/carriers/${a.carrier.id}/keys`, { token: org.token })
  for (let i = 0; i < 2; i++) {
    const tr = (await h.call('POST', '/carrier/v1/tariffs', { token: a.api_key, body: { name: `T${i}`, currency: 'ARS', service_type: { code: 'std', name: 'Standard' } } })).json().tariff
    await h.call('PUT', `/carrier/v1/tariffs/${tr.id}/rates`, { token: a.api_key, body: sampleRates })
    await h.call('POST', `/carrier/v1/tariffs/${tr.id}/activate`, { token: a.api_key })
  }
  const db = h.platform.db as Kysely<any>
  const before = await checksums(db)
  t.equal(before.tariffs!.split(':')[0], '2')
  t.equal(before.carrier_secrets!.split(':')[0], '4', 'one secret per issue: create, two rotations, and B')
  await rebuildReadModels({ database: h.platform.database, store: h.platform.store, batchSize: 5 })
  t.equal(await h.platform.projections.waitFor(await h.platform.store.headPosition(), 10_000), true)
  t.same(await checksums(db), before)
})
