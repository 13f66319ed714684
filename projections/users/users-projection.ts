import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { UserEvents } from '../../schemas/events/users.js'
import { ORGANIZATION_ACCESS } from '../organizations/organizations-projection.js'
import { defineProjection, type Projection } from '../projection.js'
import { idOf } from '../../schemas/events/streams.js'
import type { ReadModelDatabase } from '../read-model-database.js'
import { sql, type Kysely } from 'kysely'
import { CountDeltas } from '../listing-counts.js'

const userCounts = () => new CountDeltas(['organization_id', 'role', 'status'] as const)

/** A user's row as the listing counts it, before an event changes it. */
const listedUser = (db: Kysely<ReadModelDatabase>, userId: string) =>
  db.selectFrom('users').select(['organization_id', 'role', 'status']).where('id', '=', userId).executeTakeFirst()

const userIdOf = (e: RecordedEvent) => idOf.user(e.streamId)!

/**
 * users, and users' tokens in access_tokens (kind `user`; a sign-in link's code, kind `sign_in_link`, spent once used or revoked). A change to a user's role, name or
 * status changes what its token authenticates as: reported as an organization-access change, so
 * every process's token cache drops that organization's entries (deactivation revokes at once).
 * user_listing_counts follows each row's (role, status): its before and after, summed over the batch.
 */
export const usersProjection: Projection = defineProjection({
  name: 'users',
  events: UserEvents,
  async apply(db, events, ctx) {
    const changedOrganizations = new Set<string>()
    const counts = userCounts()
    for (const e of events) {
      const userId = userIdOf(e)
      switch (e.type) {
        case 'UserCreated': {
          const d = e.data
          const created = await db.insertInto('users').values({
            id: d.id, organization_id: d.organization_id, name: d.name, email: d.email, phone: d.phone, role: d.role,
            status: 'active', created_at: d.created_at, updated_at: d.created_at, deactivated_at: null,
          }).onConflict((oc) => oc.column('id').doNothing()).returning(['organization_id', 'role', 'status']).executeTakeFirst()
          counts.moved(undefined, created)
          break
        }
        case 'UserUpdated': {
          const { updated_at, ...changes } = e.data
          const before = changes.role === undefined ? undefined : await listedUser(db, userId)
          const row = await db.updateTable('users').set({ ...changes, updated_at }).where('id', '=', userId).returning(['organization_id', 'role', 'status']).executeTakeFirst()
          if (row) changedOrganizations.add(row.organization_id)
          if (before && row) counts.moved(before, row)
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
          const before = await listedUser(db, userId)
          const row = await db.updateTable('users').set({ status: 'deactivated', deactivated_at: d.deactivated_at, updated_at: d.deactivated_at })
            .where('id', '=', userId).returning(['organization_id', 'role', 'status']).executeTakeFirst()
          if (before && row) counts.moved(before, row)
          await db.updateTable('access_tokens').set({ revoked_at: d.deactivated_at })
            .where('kind', '=', 'user').where('subject_id', '=', userId).where('revoked_at', 'is', null).execute()
          if (row) changedOrganizations.add(row.organization_id)
          break
        }
        case 'UserSignInLinkCreated': {
          // A sign-in code is a credential like a token: only its hash, in the same table, under its own
          // kind, which the API's authentication never accepts (auth.ts reads organization and user kinds).
          const d = e.data
          await db.insertInto('access_tokens').values({
            token_hash: d.code_hash, token_id: d.link_id, kind: 'sign_in_link', subject_id: userId, created_at: d.created_at, expires_at: d.expires_at, revoked_at: null,
          }).onConflict((oc) => oc.column('token_hash').doNothing()).execute()
          break
        }
        case 'UserSignInLinkRedeemed':
        case 'UserSignInLinkRevoked': {
          const at = e.type === 'UserSignInLinkRedeemed' ? e.data.redeemed_at : e.data.revoked_at
          await db.updateTable('access_tokens').set({ revoked_at: at })
            .where('token_id', '=', e.data.link_id).where('kind', '=', 'sign_in_link').where('revoked_at', 'is', null).execute()
          break
        }
        default:
          break
      }
    }
    const deltas = counts.rows()
    if (deltas.length) {
      await db.insertInto('user_listing_counts').values(deltas)
        .onConflict((oc) => oc.columns(['organization_id', 'role', 'status']).doUpdateSet({ n: sql`user_listing_counts.n + excluded.n` })).execute()
      // No row at zero: a rebuild, batched otherwise, gives the same rows.
      await db.deleteFrom('user_listing_counts').where('organization_id', 'in', deltas.map((d) => d.organization_id)).where('n', '=', '0').execute()
    }
    ctx.changed(ORGANIZATION_ACCESS, changedOrganizations)
  },
})
