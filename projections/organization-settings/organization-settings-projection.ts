import { sql } from 'kysely'
import { OrganizationEvents } from '../../schemas/events/organizations.js'
import { pick } from '../../schemas/events/event-map.js'
import { defineProjection, type Projection } from '../projection.js'
import { writesOnly } from '../recorded-writes.js'
import { idOf } from '../../schemas/events/streams.js'

/** organization_settings: one row per organization that changed a setting; only the fields an event names change. */
export const organizationSettingsProjection: Projection = writesOnly(defineProjection({
  name: 'organization_settings',
  events: pick(OrganizationEvents, 'OrganizationSettingsChanged'),
  async apply(db, events) {
    for (const e of events) {
      const id = idOf.organization(e.streamId)
      if (id === null) continue
      const d = e.data
      const messages = d.delivery_attempt_messages === undefined ? null : JSON.stringify(d.delivery_attempt_messages)
      await db.insertInto('organization_settings').values({
        organization_id: id, time_zone: d.time_zone ?? null, delivery_attempt_messages: messages ?? '{}',
        public_proof_photos: d.public_proof_photos ?? false, updated_at: d.changed_at,
      }).onConflict((oc) => oc.column('organization_id').doUpdateSet({
        updated_at: d.changed_at,
        ...(d.time_zone !== undefined ? { time_zone: d.time_zone } : {}),
        ...(messages !== null ? { delivery_attempt_messages: sql`${messages}::jsonb` } : {}),
        ...(d.public_proof_photos !== undefined ? { public_proof_photos: d.public_proof_photos } : {}),
      })).execute()
    }
  },
}))
