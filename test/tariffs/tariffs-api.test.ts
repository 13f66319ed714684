import t from 'tap'
import { build } from '../helpers/build.js'
import { sampleRates } from './fixtures/sample-rates.js'

t.test('tariffs through the carrier API', async (t) => {
  const h = await build(t)
  const org = await h.createOrganization({ roles: ['carrier'], carriers_enabled: true })
  const mk = async () => (await h.call('POST', '/api/v1/carriers', { token: org.token, body: { name: 'T', integration: 'custom', visibility: 'private' } })).json()
  const carrier = await mk()
  const other = await mk()
  const key = carrier.api_key

  const create = await h.call('POST', '/carrier/v1/tariffs', { token: key, body: { name: 'Std 2026', currency: 'ars', service_type: { code: 'std', name: 'Standard' } } })
  t.equal(create.statusCode, 201, create.body)
  const tariff = create.json().tariff
  t.match(tariff.id, /^trf_/)
  t.equal(tariff.currency, 'ARS')
  t.equal(tariff.volumetric_divisor, 5000)
  t.equal(tariff.status, 'draft')
  t.equal(tariff.service_type.code, 'std')
  const me = (await h.call('GET', '/carrier/v1/me', { token: key })).json()
  t.same(me.carrier.service_types, [tariff.service_type], 'the service type was created on the carrier')

  t.test('activation without rates is a 409', async (t) => {
    const res = await h.call('POST', `/carrier/v1/tariffs/${tariff.id}/activate`, { token: key })
    t.equal(res.statusCode, 409)
    t.equal(res.json().code, 'tariff_without_rates')
  })

  t.test('bad create and rates bodies list every field', async (t) => {
    const bad = await h.call('POST', '/carrier/v1/tariffs', { token: key, body: { name: '', currency: 'XYZ', service_type: { code: 'a b' }, volumetric_divisor: 0 } })
    t.equal(bad.statusCode, 422)
    for (const k of ['name', 'service_type.code', 'service_type.name', 'volumetric_divisor']) t.ok(bad.json().errors[k], k)
    const badCurrency = await h.call('POST', '/carrier/v1/tariffs', { token: key, body: { name: 'x', currency: 'XYZ', service_type: { code: 'std', name: 'S' } } })
    t.ok(badCurrency.json().errors.currency)
    const rates = await h.call('PUT', `/carrier/v1/tariffs/${tariff.id}/rates`, {
      token: key,
      body: { zones: [{ code: 'A', name: 'A' }, { code: 'A', name: 'dup', countries: ['ARG'] }], rates: [{ origin_zone: 'A', destination_zone: 'Z', max_grams: -1, price: 'x', lead_time_days: 1.5 }] },
    })
    t.equal(rates.statusCode, 422)
    for (const k of ['zones.0', 'zones.1.code', 'zones.1.countries.0', 'rates.0.destination_zone', 'rates.0.max_grams', 'rates.0.price', 'rates.0.lead_time_days']) t.ok(rates.json().errors[k], k)
    t.equal((await h.call('PUT', `/carrier/v1/tariffs/${tariff.id}/rates`, { token: key, body: { zones: [] } })).statusCode, 422)
  })

  t.test('publish rates, activate; one active per service type', async (t) => {
    const put = await h.call('PUT', `/carrier/v1/tariffs/${tariff.id}/rates`, { token: key, body: sampleRates })
    t.equal(put.statusCode, 200, put.body)
    t.equal(put.json().tariff.zones.length, 3)
    t.same(put.json().tariff.zones[1].countries, ['AR'], 'country codes stored upper case')
    const act = await h.call('POST', `/carrier/v1/tariffs/${tariff.id}/activate`, { token: key })
    t.equal(act.statusCode, 200, act.body)
    t.equal(act.json().tariff.status, 'active')
    const second = (await h.call('POST', '/carrier/v1/tariffs', { token: key, body: { name: 'Std 2027', currency: 'ARS', service_type: { code: 'std', name: 'Standard' }, volumetric_divisor: 4000 } })).json().tariff
    t.equal(second.service_type.id, tariff.service_type.id, 'same code, same service type')
    await h.call('PUT', `/carrier/v1/tariffs/${second.id}/rates`, { token: key, body: sampleRates })
    await h.call('POST', `/carrier/v1/tariffs/${second.id}/activate`, { token: key })
    const list = (await h.call('GET', '/carrier/v1/tariffs', { token: key })).json().tariffs
    t.same(list.map((x: any) => [x.id, x.status]), [[tariff.id, 'inactive'], [second.id, 'active']])
    const express = (await h.call('POST', '/carrier/v1/tariffs', { token: key, body: { name: 'Exp', currency: 'ARS', service_type: { code: 'exp', name: 'Express' } } })).json().tariff
    await h.call('PUT', `/carrier/v1/tariffs/${express.id}/rates`, { token: key, body: sampleRates })
    await h.call('POST', `/carrier/v1/tariffs/${express.id}/activate`, { token: key })
    const after = (await h.call('GET', '/carrier/v1/tariffs', { token: key })).json().tariffs
    t.equal(after.filter((x: any) => x.status === 'active').length, 2, 'one active per service type, two service types')
  })

  t.test("another carrier's tariff is a 404", async (t) => {
    t.equal((await h.call('GET', `/carrier/v1/tariffs/${tariff.id}`, { token: other.api_key })).statusCode, 404)
    t.equal((await h.call('PUT', `/carrier/v1/tariffs/${tariff.id}/rates`, { token: other.api_key, body: sampleRates })).statusCode, 404)
    t.equal((await h.call('POST', `/carrier/v1/tariffs/${tariff.id}/activate`, { token: other.api_key })).statusCode, 404)
    t.same((await h.call('GET', '/carrier/v1/tariffs', { token: other.api_key })).json().tariffs, [])
  })
})
