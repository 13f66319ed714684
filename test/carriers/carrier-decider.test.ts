import t from 'tap'
import type { CarrierEvent } from '../../src/carriers/carrier.js'
import { decider as create, type CreateCarrier } from '../../src/carriers/create-carrier.js'
import { decider as update } from '../../src/carriers/update-carrier.js'
import { decider as certify, type DecideCertification } from '../../src/carriers/certify-carrier.js'
import { decider as rotate } from '../../src/carriers/rotate-keys.js'
import { decider as addServiceType } from '../../src/carriers/add-service-type.js'
import { IllegalStateError, NotFoundError } from '../../src/shared/errors.js'
import { DeciderSpecification } from '../helpers/decider-specification.js'

// Given events / when command / then events (or error), no database.

const now = new Date('2026-11-22T10:00:00Z')
const creds = { key_id: 'tok_k', key_hash: 'h', secret_id: 'tok_s', secret_encrypted: 'v1.x.y.z' }
const createCarrier = (visibility: 'private' | 'public'): CreateCarrier => ({
  type: 'CreateCarrier',
  data: { name: ' Fast ', integration: 'custom', visibility, id: 'car_1', organization_id: 'org_1', ...creds, service_type_ids: [7], service_types: [{ code: 'std', name: 'Standard' }], now },
})
/** A given history: the events the create decider makes. */
const created = (visibility: 'private' | 'public'): CarrierEvent[] => create.decide(createCarrier(visibility), create.initialState())

t.test('create: a public carrier waits for certification, a private one needs none', async (t) => {
  const spec = DeciderSpecification.for(create)
  spec.given([]).when(createCarrier('public')).thenMatches(t, [
    { type: 'CarrierCreated', data: { name: 'Fast', certification_status: 'pending', access_mode: 'contract', quote_mode: 'tariff' } },
    { type: 'CarrierCredentialsIssued' },
    { type: 'ServiceTypeAdded', data: { id: 7, code: 'std' } },
  ])
  spec.given([]).when(createCarrier('private'))
    .thenMatches(t, [{ type: 'CarrierCreated', data: { certification_status: 'not_required' } }, { type: 'CarrierCredentialsIssued' }, { type: 'ServiceTypeAdded' }])
  spec.given(created('public'))
    .when({ type: 'CreateCarrier', data: { name: 'x', integration: 'custom', visibility: 'private', id: 'car_1', organization_id: 'o', ...creds, service_type_ids: [], now } })
    .thenThrows(t, IllegalStateError, { code: 'carrier_exists' })
})

t.test('certification: only public carriers; the same decision twice appends nothing', async (t) => {
  const spec = DeciderSpecification.for(certify)
  const certified: DecideCertification = { type: 'DecideCertification', data: { status: 'certified', now } }
  const [decided] = spec.given(created('public')).when(certified).thenMatches(t, [{ type: 'CarrierCertificationDecided', data: { status: 'certified' } }])
  spec.given([...created('public'), decided!]).when(certified).thenNothingHappened(t)
  spec.given(created('private')).when(certified).thenThrows(t, IllegalStateError, { code: 'certification_not_required' })
  spec.given([]).when(certified).thenThrows(t, NotFoundError, { code: 'not_found', message: 'Carrier not found.' })
})

t.test('update: only changed fields; going public asks for certification; unchanged appends nothing', async (t) => {
  const spec = DeciderSpecification.for(update).given(created('private'))
  const current = { name: 'Fast', visibility: 'private', quote_mode: 'tariff' }
  spec.when({ type: 'UpdateCarrier', data: { changes: { name: 'Fast' }, current, now } }).thenNothingHappened(t)
  spec.when({ type: 'UpdateCarrier', data: { changes: { visibility: 'public', name: 'Faster' }, current, now } })
    .then(t, [{ type: 'CarrierUpdated', data: { visibility: 'public', name: 'Faster', certification_status: 'pending', updated_at: now.toISOString() } }])
})

t.test('rotation: the previous credentials expire 24 h later', async (t) => {
  DeciderSpecification.for(rotate).given(created('private')).when({ type: 'RotateCredentials', data: { ...creds, now } }).then(t, [{
    type: 'CarrierCredentialsIssued',
    data: { ...creds, issued_at: now.toISOString(), previous_expire_at: '2026-11-23T10:00:00.000Z' },
  }])
})

t.test('service types are idempotent by code', async (t) => {
  const spec = DeciderSpecification.for(addServiceType).given(created('private'))
  spec.when({ type: 'AddServiceType', data: { id: 9, code: 'std', name: 'Standard', now } }).thenNothingHappened(t)
  spec.when({ type: 'AddServiceType', data: { id: 9, code: 'exp', name: 'Express', now } }).thenMatches(t, [{ type: 'ServiceTypeAdded', data: { id: 9, code: 'exp' } }])
})
