import t from 'tap'
import { build } from '../helpers/build.js'

// Issue 37: an organization's display settings. The time zone its pages show times in (an IANA name,
// validated; by default from its country: its operational address), the text a recipient reads
// after a failed delivery attempt per reason, and whether proof photos are public.

t.test('organization settings: defaults from the country, changes, validation, tenants', async (t) => {
  const h = await build(t)
  const madrid = await h.createOrganization({ name: 'Rápido Madrid', roles: ['carrier'] })
  const other = await h.createOrganization({ name: 'Other Carrier', roles: ['carrier'] })
  const get = async (token: string) => {
    const res = await h.call('GET', '/api/v1/organizations/my/settings', { token })
    t.equal(res.statusCode, 200, res.body)
    return res.json().settings
  }

  t.same(await get(madrid.token), { time_zone: 'UTC', time_zone_source: 'default', delivery_attempt_messages: {}, public_proof_photos: false }, 'no country yet: UTC')
  const place = await h.call('POST', '/api/v1/organizations/my/places', {
    token: madrid.token, body: { name: 'Almacén', street: 'Calle de Alcalá', street_number: '100', city: 'Madrid', state: 'Madrid', country: 'ES' },
  })
  t.equal(place.statusCode, 201, place.body)
  t.match(await get(madrid.token), { time_zone: 'Europe/Madrid', time_zone_source: 'country' }, 'from its operational address\'s city')
  const cordoba = await h.createOrganization({ name: 'Córdoba Envíos', roles: ['carrier'] })
  t.equal((await h.call('POST', '/api/v1/organizations/my/places', { token: cordoba.token, body: { name: 'Depot', street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR' } })).statusCode, 201)
  t.match(await get(cordoba.token), { time_zone: /^America\/Argentina\//, time_zone_source: 'country' }, 'the gazetteer\'s zone for the city')

  const set = await h.call('PATCH', '/api/v1/organizations/my/settings', {
    token: madrid.token,
    body: { time_zone: 'Atlantic/Canary', delivery_attempt_messages: { no_answer: 'Volvemos mañana entre 9 y 13 h.', default: 'Te escribimos para coordinar.' }, public_proof_photos: true },
  })
  t.equal(set.statusCode, 200, set.body)
  t.same(set.json().settings, {
    time_zone: 'Atlantic/Canary', time_zone_source: 'setting', public_proof_photos: true,
    delivery_attempt_messages: { no_answer: 'Volvemos mañana entre 9 y 13 h.', default: 'Te escribimos para coordinar.' },
  })
  t.same(await get(madrid.token), set.json().settings, 'read back')
  t.match(await get(other.token), { time_zone: 'UTC', public_proof_photos: false, delivery_attempt_messages: {} }, 'another organization\'s are its own')

  const partial = await h.call('PATCH', '/api/v1/organizations/my/settings', { token: madrid.token, body: { public_proof_photos: false } })
  t.match(partial.json().settings, { time_zone: 'Atlantic/Canary', public_proof_photos: false, delivery_attempt_messages: { no_answer: 'Volvemos mañana entre 9 y 13 h.' } }, 'only the fields sent change')
  const reset = await h.call('PATCH', '/api/v1/organizations/my/settings', { token: madrid.token, body: { time_zone: null } })
  t.match(reset.json().settings, { time_zone: 'Europe/Madrid', time_zone_source: 'country' }, 'null: back to the country\'s')

  const bad = await h.call('PATCH', '/api/v1/organizations/my/settings', {
    token: madrid.token, body: { time_zone: 'Mars/Olympus', delivery_attempt_messages: { no_answer: '', exploded: 'x' }, public_proof_photos: 'yes' },
  })
  t.equal(bad.statusCode, 422, bad.body)
  const errors = bad.json().errors
  for (const field of ['time_zone', 'public_proof_photos']) t.ok(errors[field], `names ${field}: ${JSON.stringify(errors)}`)
  t.ok(Object.keys(errors).some((k) => k.startsWith('delivery_attempt_messages')), `names the messages: ${JSON.stringify(errors)}`)
  t.equal((await h.call('PATCH', '/api/v1/organizations/my/settings', { token: madrid.token, body: {} })).statusCode, 422, 'nothing to change')
  t.equal((await h.call('PATCH', '/api/v1/organizations/my/settings', { token: madrid.token, body: { time_zone: 'Europe/Madrid' } })).statusCode, 200, 'a valid zone')
  t.equal((await h.call('PATCH', '/api/v1/organizations/my/settings', { body: { time_zone: 'Europe/Madrid' } })).statusCode, 401)

  const doc = (await h.call('GET', '/openapi.json')).json()
  t.ok(doc.components.schemas.OrganizationSettings.properties.time_zone, 'the OpenAPI document names the setting')
  t.ok(doc.paths['/api/v1/organizations/my/settings'].patch, 'and its PATCH')
})
