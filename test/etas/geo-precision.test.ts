import t from 'tap'
import { sql } from 'kysely'
import { build } from '../helpers/build.js'
import { routesWorld } from '../routes/fixtures.js'
import { rebuildReadModels } from '../../src/cli/rebuild.js'
import { newUlid } from '../../src/shared/ids.js'
import { addressPrecision, drivablePoint } from '../../src/infrastructure/geo/precision.js'
import { countrystatecityGazetteer } from '../../src/infrastructure/geo/countrystatecity-gazetteer.js'

// DESIGN §3.10 geo_precision: `exact` (the caller's coordinates), `city`, `state` or `country` (an
// unknown town at its state's or country's centre, §3.4b); the last two are not a place to drive to.

t.test('the rule, read backwards from what every stored address has', async (t) => {
  const g = countrystatecityGazetteer()
  const rosario = g.city('AR', 'S', 'Rosario')!
  const santaFe = g.stateById(rosario.stateId!)!
  const ar = g.country('AR')!
  t.equal(addressPrecision({ city_id: rosario.id, geo_latitude: rosario.latitude, geo_longitude: rosario.longitude }), 'city')
  t.equal(addressPrecision({ city: { id: rosario.id }, geo_latitude: rosario.latitude + 0.01, geo_longitude: rosario.longitude }), 'exact', 'the snapshot form too')
  t.equal(addressPrecision({ city_id: 10_000_001, state_id: santaFe.id, country_id: ar.id, geo_latitude: santaFe.latitude, geo_longitude: santaFe.longitude }), 'state')
  t.equal(addressPrecision({ city_id: 10_000_002, state_id: null, country_id: ar.id, geo_latitude: ar.latitude, geo_longitude: ar.longitude }), 'country')
  t.equal(addressPrecision({ city_id: 10_000_002, country_id: ar.id, geo_latitude: -33, geo_longitude: -60 }), 'exact', 'a recorded town with its own point')
  t.equal(addressPrecision({ geo_precision: 'city', geo_latitude: 1, geo_longitude: 2 }), 'city', 'recorded precision wins')
  t.equal(addressPrecision({ geo_precision: 'exact', geo_latitude: null, geo_longitude: null }), null, 'no coordinates, no precision')
  t.same(drivablePoint({ geo_precision: 'state', geo_latitude: 1, geo_longitude: 2 }), undefined)
  t.same(drivablePoint({ geo_precision: 'city', geo_latitude: 1, geo_longitude: 2 }), { lat: 1, lng: 2 })
})

t.test('addresses carry it; planning leaves out the centres; optimize refuses them; old events get it by replay', async (t) => {
  const h = await build(t, { routingSpeedKmh: 30 })
  const w = await routesWorld(h)
  const addr = (over: Record<string, unknown>) => ({ name: 'Ana', street: 'Mitre', street_number: '1', country: 'AR', ...over })
  const exact = await w.task({ address: addr({ city: 'Rosario', state: 'Santa Fe', geo_latitude: -32.95, geo_longitude: -60.64 }) })
  const city = await w.task({ address: addr({ city: 'Rosario', state: 'Santa Fe' }) })
  const state = await w.task({ address: addr({ city: 'Villa Inventada del Norte', state: 'Santa Fe' }) })
  const country = await w.task({ address: addr({ city: 'Pueblo Que No Existe' }) })
  t.same([exact, city, state, country].map((x) => x.address.geo_precision), ['exact', 'city', 'state', 'country'])
  const shipment = await h.call('POST', '/api/v1/shipments', {
    token: w.shipper.token, body: { carrier_id: w.carrier.id, origin: addr({ city: 'Rosario', state: 'Santa Fe' }), destination: addr({ city: 'Villa Inventada del Norte', state: 'Santa Fe' }), packages: [{ grams: 100, length: 1, width: 1, height: 1 }] },
  })
  t.same([shipment.json().shipment.origin.geo_precision, shipment.json().shipment.destination.geo_precision], ['city', 'state'])
  const reused = await w.task({ address: { id: state.address.id } })
  t.equal(reused.address.geo_precision, 'state', 'an address reused by id keeps it')

  const van = await w.vehicle({ packages: 100 })
  const plan = await w.api('POST', '/routes/plan', { shift_date: '2026-11-27', task_ulids: [exact.ulid, city.ulid, state.ulid, country.ulid], vehicle_ids: [van.id] })
  t.equal(plan.statusCode, 201, plan.body)
  t.same(plan.json().unassigned, [{ task_ulid: state.ulid, reason: 'no_coordinates' }, { task_ulid: country.ulid, reason: 'no_coordinates' }])
  t.same(plan.json().routes[0].tasks.map((x: any) => x.ulid).sort(), [exact.ulid, city.ulid].sort())

  const route = await w.route({ task_ulids: [reused.ulid, (await w.task({ address: addr({ city: 'Rosario', state: 'Santa Fe' }) })).ulid] })
  const optimize = await w.api('POST', `/routes/${route.id}/optimize`, {})
  t.equal(optimize.statusCode, 422, optimize.body)
  t.same(Object.keys(optimize.json().errors), ['tasks.0'])
  t.match(optimize.json().errors['tasks.0'], [new RegExp(reused.ulid)])

  // An event written before geo_precision existed (its snapshot has none): the projection derives it.
  const ulid = newUlid()
  const snapshot = { ...state.address, id: `adr_${ulid.toLowerCase()}`, created: true, organization_id: w.carrier.id, place_id: null, document_type: null, document_number: null }
  delete snapshot.geo_precision
  const row = await h.platform.rm.selectFrom('addresses').select(['city_id', 'state_id', 'country_id', 'state_code', 'country_iso']).where('id', '=', state.address.id).executeTakeFirstOrThrow()
  snapshot.city = { id: Number(row.city_id), name: state.address.city.name }
  snapshot.state = { id: Number(row.state_id), name: state.address.state.name, code: row.state_code }
  snapshot.country = { id: Number(row.country_id), name: 'Argentina', iso: row.country_iso }
  const appended = await h.platform.store.append(`task-${ulid}`, [{
    type: 'TaskCreated', metadata: { actor: { kind: 'system', id: 'test' }, occurred_at: new Date().toISOString() },
    data: {
      ulid, organization_id: w.carrier.id, type: 'delivery', address: snapshot, shipment_id: null, workflow_id: null, step_key: null, assignee_id: null,
      time_windows: [], duration_minutes: null, dependencies: [], requirements: { complete: [], fail: [] }, load: { grams: 0, volume_cm3: 0, packages: 0 },
      notes: null, external_reference: null, created_at: new Date().toISOString(),
    },
  }], 'no_stream')
  await h.platform.projections.waitFor(appended.position, 10_000)
  t.equal((await w.api('GET', `/tasks/${ulid}`)).json().address.geo_precision, 'state', 'an old snapshot: derived when projected')
  const stored = async () => (await h.platform.rm.selectFrom('addresses').select('geo_precision').where('id', '=', snapshot.id).executeTakeFirstOrThrow()).geo_precision
  t.equal(await stored(), 'state')
  // A row projected before the column existed is null until a rebuild fills it (the API derives it meanwhile).
  await sql`update read_model.addresses set geo_precision = null`.execute(h.platform.db)
  t.equal((await w.api('GET', `/tasks/${ulid}`)).json().address.geo_precision, 'state', 'derived on the way out meanwhile')
  await rebuildReadModels({ database: h.platform.database, store: h.platform.store })
  t.equal(await stored(), 'state', 'the rebuild stored it')
  const nulls = await sql<{ n: number }>`select count(*)::int as n from read_model.addresses where geo_precision is null and geo_latitude is not null`.execute(h.platform.db)
  t.equal(nulls.rows[0]!.n, 0, 'every address with coordinates has it after a rebuild')
})
