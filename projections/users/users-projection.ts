import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { UserEvents } from '../../schemas/events/users.js'
import { ORGANIZATION_ACCESS } from '../organizations/organizations-projection.js'
import { defineProjection, type Projection } from '../projection.js'
import { idOf } from '../../schemas/events/streams.js'

const userIdOf = (e: RecordedEvent) => idOf.user(e.streamId)!

/**
 * users, and users' tokens in access_tokens (kind `user`). A change to a user's role, name or
 * status changes what its token authenticates as: reported as an organization-access change, so
 * every process's token cache drops that organization's entries (deactivation revokes at once).
 */
export const usersProjection: Projection = defineProjection({
  name: 'users',
  events: UserEvents,
  async apply(db, events, ctx) {
    const changedOrganizations = new Set<string>()
    for (const e of events) {
      const userId = userIdOf(e)
      switch (e.type) {
        case 'UserCreated': {
          const d = e.data
          await db.insertInto('users').values({
            id: d.id, organization_id: d.organization_id, name: d.name, email: d.email, phone: d.phone, role: d.role,
            status: 'active', created_at: d.created_at, updated_at: d.created_at, deactivated_at: null,
          }).onConflict((oc) => oc.column('id').doNothing()).execute()
          break
        }
        case 'UserUpdated': {
          const { updated_at, ...changes } = e.data
          const row = await db.updateTable('users').set({ ...changes, updated_at }).where('id', '=', userId).returning('organization_id').executeTakeFirst()
          if (row) changedOrganizations.add(row.organization_id)
          break
        }
        case 'UserTokenIssued': {
          const d = e.data
          await db.insertInto('access_tokens').values({
            token_hash: d.token_hash, token_id: d.token_id, kind: 'user', subject_id: userId, created_at: d.issued_at, expires_at: null, revoked_at: null,
          }).onConflict((oc) => oc.column('token_hash').doNothing()).execute()
          break
        }
        case 'UserDeactivated': {
          const d = e.data
          const row = await db.updateTable('users').set({ status: 'deactivated', deactivated_at: d.deactivated_at, updated_at: d.deactivated_at })
            .where('id', '=', userId).returning('organization_id').executeTakeFirst()
          await db.updateTable('access_tokens').set({ revoked_at: d.deactivated_at })
            .where('kind', '=', 'user').where('subject_id', '=', userId).where('revoked_at', 'is', null).execute()
          if (row) changedOrganizations.add(row.organization_id)
          break
        }
        default:
          break
      }
    }
    ctx.changed(ORGANIZATION_ACCESS, changedOrganizations)
  },
})
