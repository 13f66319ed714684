import t from 'tap'
import { evolve, initialState, type CarrierEvent, type CarrierState } from '../../src/carriers/carrier.js'
import { decide as create } from '../../src/carriers/create-carrier.js'
import { decide as update } from '../../src/carriers/update-carrier.js'
import { decide as certify } from '../../src/carriers/certify-carrier.js'
import { decide as rotate } from '../../src/carriers/rotate-keys.js'
import { decide as addServiceType } from '../../src/carriers/add-service-type.js'

const now = new Date('2026-11-22T10:00:00Z')
const given = (events: CarrierEvent[]): CarrierState => events.reduce(evolve, initialState())
const creds = { key_id: 'tok_k', key_hash: 'h', secret_id: 'tok_s', secret_encrypted: 'v1.x.y.z' }
const created = (visibility: 'private' | 'public') =>
  create({ type: 'CreateCarrier', data: { name: ' Fast ', integration: 'custom', visibility, id: 'car_1', organization_id: 'org_1', ...creds, service_type_ids: [7], service_types: [{ code: 'std', name: 'Standard' }], now } }, initialState())

t.test('create: a public carrier waits for certification, a private one needs none', async (t) => {
  const pub = created('public')
  t.same(pub.map((e) => e.type), ['CarrierCreated', 'CarrierCredentialsIssued', 'ServiceTypeAdded'])
  t.match(pub[0]!.data, { name: 'Fast', certification_status: 'pending', access_mode: 'contract', quote_mode: 'tariff' })
  t.match(created('private')[0]!.data, { certification_status: 'not_required' })
  t.throws(() => create({ type: 'CreateCarrier', data: { name: 'x', integration: 'custom', visibility: 'private', id: 'car_1', organization_id: 'o', ...creds, service_type_ids: [], now } }, given(pub)), { statusCode: 409, name: 'Error' })
})

t.test('certification: only public carriers; the same decision twice appends nothing', async (t) => {
  const pub = given(created('public'))
  const [decided] = certify({ type: 'DecideCertification', data: { status: 'certified', now } }, pub)
  t.match(decided, { type: 'CarrierCertificationDecided', data: { status: 'certified' } })
  t.same(certify({ type: 'DecideCertification', data: { status: 'certified', now } }, evolve(pub, decided!)), [])
  t.throws(() => certify({ type: 'DecideCertification', data: { status: 'certified', now } }, given(created('private'))), { statusCode: 409, name: 'Error' })
  t.throws(() => certify({ type: 'DecideCertification', data: { status: 'certified', now } }, initialState()), { statusCode: 404, name: 'Error' })
})

t.test('update: only changed fields; going public asks for certification; unchanged appends nothing', async (t) => {
  const priv = given(created('private'))
  const current = { name: 'Fast', visibility: 'private', quote_mode: 'tariff' }
  t.same(update({ type: 'UpdateCarrier', data: { changes: { name: 'Fast' }, current, now } }, priv), [])
  const [e] = update({ type: 'UpdateCarrier', data: { changes: { visibility: 'public', name: 'Faster' }, current, now } }, priv)
  t.same(e!.data, { visibility: 'public', name: 'Faster', certification_status: 'pending', updated_at: now.toISOString() })
})

t.test('rotation: the previous credentials expire 24 h later', async (t) => {
  const [e] = rotate({ type: 'RotateCredentials', data: { ...creds, now } }, given(created('private')))
  t.equal((e!.data as any).previous_expire_at, '2026-11-23T10:00:00.000Z')
})

t.test('service types are idempotent by code', async (t) => {
  const state = given(created('private'))
  t.same(addServiceType({ type: 'AddServiceType', data: { id: 9, code: 'std', name: 'Standard', now } }, state), [])
  t.match(addServiceType({ type: 'AddServiceType', data: { id: 9, code: 'exp', name: 'Express', now } }, state), [{ type: 'ServiceTypeAdded', data: { id: 9, code: 'exp' } }])
})
