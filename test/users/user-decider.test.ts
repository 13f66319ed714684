import t from 'tap'
import { DeciderSpecification } from '../helpers/decider-specification.js'
import { decider as creation, type CreateUser } from '../../src/users/create-user.js'
import { decider as update } from '../../src/users/update-user.js'
import { decider as deactivation } from '../../src/users/deactivate-user.js'
import type { UserEvent } from '../../src/users/user.js'
import { IllegalStateError, NotFoundError } from '../../src/shared/errors.js'

// Given events / when command / then events (or error), no database.

const now = new Date('2026-11-24T09:00:00Z')
const at = now.toISOString()
const create: CreateUser = {
  type: 'CreateUser',
  data: { id: 'usr_1', organization_id: 'org_1', name: ' Dana Driver ', email: 'dana@example.com ', phone: null, role: 'driver', token_id: 'tok_1', token_hash: 'h1', now },
}
const created: UserEvent = { type: 'UserCreated', data: { id: 'usr_1', organization_id: 'org_1', name: 'Dana Driver', email: 'dana@example.com', phone: null, role: 'driver', created_at: at } }
const token: UserEvent = { type: 'UserTokenIssued', data: { token_id: 'tok_1', token_hash: 'h1', issued_at: at } }
const deactivated: UserEvent = { type: 'UserDeactivated', data: { deactivated_at: at } }

t.test('create: the user and its token, trimmed; a second create is refused', async (t) => {
  DeciderSpecification.for(creation).given([]).when(create).then(t, [created, token])
  DeciderSpecification.for(creation).given([created, token]).when(create).thenThrows(t, IllegalStateError, { code: 'user_exists' })
})

t.test('update: only what changed; another organization\'s user is unknown; a deactivated user is frozen', async (t) => {
  const spec = DeciderSpecification.for(update)
  spec.given([created, token]).when({ type: 'UpdateUser', data: { organization_id: 'org_1', changes: { role: 'dispatcher', name: ' Dana ' }, now } })
    .then(t, [{ type: 'UserUpdated', data: { role: 'dispatcher', name: 'Dana', updated_at: at } }])
  spec.given([created, token]).when({ type: 'UpdateUser', data: { organization_id: 'org_2', changes: { name: 'x' }, now } }).thenThrows(t, NotFoundError)
  spec.given([]).when({ type: 'UpdateUser', data: { organization_id: 'org_1', changes: { name: 'x' }, now } }).thenThrows(t, NotFoundError)
  spec.given([created, token, deactivated]).when({ type: 'UpdateUser', data: { organization_id: 'org_1', changes: { name: 'x' }, now } })
    .thenThrows(t, IllegalStateError, { code: 'user_deactivated' })
})

t.test('deactivate: once; again changes nothing', async (t) => {
  const spec = DeciderSpecification.for(deactivation)
  spec.given([created, token]).when({ type: 'DeactivateUser', data: { organization_id: 'org_1', now } }).then(t, [deactivated])
  spec.given([created, token, deactivated]).when({ type: 'DeactivateUser', data: { organization_id: 'org_1', now } }).thenNothingHappened(t)
  spec.given([created]).when({ type: 'DeactivateUser', data: { organization_id: 'org_9', now } }).thenThrows(t, NotFoundError)
})
