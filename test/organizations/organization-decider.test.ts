import t from 'tap'
import { DeciderSpecification } from '../helpers/decider-specification.js'
import { decider as creation, type CreateOrganization } from '../../src/organizations/create-organization.js'
import { decider as issueToken } from '../../src/organizations/issue-token.js'
import { decider as revokeToken } from '../../src/organizations/revoke-token.js'
import { decider as suspend } from '../../src/organizations/suspend-organization.js'
import { decider as unsuspend } from '../../src/organizations/unsuspend-organization.js'
import { decider as signContract } from '../../src/organizations/sign-contract.js'
import { decider as placeDecider, type AddPlace } from '../../src/organizations/add-place.js'
import type { OrganizationEvent } from '../../src/organizations/organization.js'
import type { PlaceEvent } from '../../src/organizations/place.js'
import { IllegalStateError, NotFoundError } from '../../src/shared/errors.js'

// Given events / when command / then events (or error), no database.

const now = new Date('2026-11-24T09:00:00Z')
const at = now.toISOString()
const create: CreateOrganization = {
  type: 'CreateOrganization',
  data: { name: '  Acme Freight ', subdomain: 'acme', roles: ['carrier', 'shipper', 'carrier'], id: 'org_1', internal_id: 7, token_id: 'tok_1', token_hash: 'h1', now },
}
const created: OrganizationEvent = {
  type: 'OrganizationCreated',
  data: { id: 'org_1', internal_id: 7, name: 'Acme Freight', subdomain: 'acme', roles: ['carrier', 'shipper'], currency: 'USD', locale: 'en', timezone: 'UTC', market: null, carriers_enabled: false, created_at: at },
}
const firstToken: OrganizationEvent = { type: 'TokenIssued', data: { token_id: 'tok_1', token_hash: 'h1', issued_at: at } }

t.test('create: the organization and its first token; defaults filled, name trimmed, roles once each', async (t) => {
  DeciderSpecification.for(creation).given([]).when(create).then(t, [created, firstToken])
  DeciderSpecification.for(creation).given([created, firstToken]).when(create)
    .thenThrows(t, IllegalStateError, { code: 'organization_exists' })
})

t.test('create: the currency is stored upper case', async (t) => {
  DeciderSpecification.for(creation).given([]).when({ ...create, data: { ...create.data, currency: 'ars' } })
    .thenMatches(t, [{ type: 'OrganizationCreated', data: { currency: 'ARS' } }, { type: 'TokenIssued' }])
})

const spec = {
  IssueToken: DeciderSpecification.for(issueToken), RevokeToken: DeciderSpecification.for(revokeToken),
  Suspend: DeciderSpecification.for(suspend), Unsuspend: DeciderSpecification.for(unsuspend), SignContract: DeciderSpecification.for(signContract),
}
const existing = [created, firstToken]

t.test('admin commands on an organization that does not exist are 404', async (t) => {
  spec.Suspend.given([]).when({ type: 'Suspend', data: { now } }).thenThrows(t, NotFoundError, { code: 'not_found' })
  spec.IssueToken.given([]).when({ type: 'IssueToken', data: { token_id: 'tok_2', token_hash: 'h2', now } }).thenThrows(t, NotFoundError)
})

t.test('tokens: issued; revoked once; an unknown token is 404', async (t) => {
  spec.IssueToken.given(existing).when({ type: 'IssueToken', data: { token_id: 'tok_2', token_hash: 'h2', now } })
    .then(t, [{ type: 'TokenIssued', data: { token_id: 'tok_2', token_hash: 'h2', issued_at: at } }])
  const revoked: OrganizationEvent = { type: 'TokenRevoked', data: { token_id: 'tok_1', revoked_at: at } }
  spec.RevokeToken.given(existing).when({ type: 'RevokeToken', data: { token_id: 'tok_1', now } }).then(t, [revoked])
  spec.RevokeToken.given([...existing, revoked]).when({ type: 'RevokeToken', data: { token_id: 'tok_1', now } }).thenNothingHappened(t)
  spec.RevokeToken.given(existing).when({ type: 'RevokeToken', data: { token_id: 'tok_9', now } }).thenThrows(t, NotFoundError, { message: 'Token not found.' })
})

t.test('suspension: suspend and unsuspend each take effect once', async (t) => {
  const suspended: OrganizationEvent = { type: 'OrganizationSuspended', data: { suspended_at: at } }
  spec.Suspend.given(existing).when({ type: 'Suspend', data: { now } }).then(t, [suspended])
  spec.Suspend.given([...existing, suspended]).when({ type: 'Suspend', data: { now } }).thenNothingHappened(t)
  spec.Unsuspend.given([...existing, suspended]).when({ type: 'Unsuspend', data: { now } })
    .then(t, [{ type: 'OrganizationUnsuspended', data: { unsuspended_at: at } }])
  spec.Unsuspend.given(existing).when({ type: 'Unsuspend', data: { now } }).thenNothingHappened(t)
})

t.test('contracts: one active contract per carrier and shipper', async (t) => {
  const sign = { type: 'SignContract' as const, data: { contract_id: 'ctr_1', carrier_id: 'org_c', shipper_id: 'org_1', now } }
  const signed: OrganizationEvent = { type: 'ContractSigned', data: { contract_id: 'ctr_1', carrier_id: 'org_c', shipper_id: 'org_1', signed_at: at } }
  spec.SignContract.given(existing).when(sign).then(t, [signed])
  spec.SignContract.given([...existing, signed]).when({ ...sign, data: { ...sign.data, contract_id: 'ctr_2' } })
    .thenThrows(t, IllegalStateError, { code: 'contract_exists' })
  spec.SignContract.given([...existing, signed]).when({ ...sign, data: { ...sign.data, contract_id: 'ctr_3', carrier_id: 'org_d' } })
    .thenMatches(t, [{ type: 'ContractSigned', data: { carrier_id: 'org_d' } }])
})

t.test('places: added once', async (t) => {
  const place = DeciderSpecification.for(placeDecider)
  const add: AddPlace = { type: 'AddPlace', data: { id: 'ple_1' } as AddPlace['data'] }
  const added: PlaceEvent = { type: 'PlaceAdded', data: add.data }
  place.given([]).when(add).then(t, [added])
  place.given([added]).when(add).thenThrows(t, IllegalStateError, { code: 'place_exists' })
})
