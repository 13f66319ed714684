import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { CarrierEvents } from '../../schemas/events/carriers.js'
import { defineProjection, type Projection } from '../projection.js'
import { writesOnly } from '../recorded-writes.js'
import { idOf } from '../../schemas/events/streams.js'

const carrierIdOf = (e: RecordedEvent) => idOf.carrier(e.streamId)!

/** carriers, carrier_secrets, service_types, and carrier API keys in access_tokens (kind `carrier`). */
export const carriersProjection: Projection = writesOnly(defineProjection({
  name: 'carriers',
  events: CarrierEvents,
  async apply(db, events) {
    for (const e of events) {
      const carrierId = carrierIdOf(e)
      switch (e.type) {
        case 'CarrierCreated': {
          const d = e.data
          await db.insertInto('carriers').values({
            id: d.id, organization_id: d.organization_id, name: d.name, integration: d.integration, visibility: d.visibility,
            access_mode: d.access_mode, certification_status: d.certification_status, notification_url: d.notification_url,
            quote_url: d.quote_url, quote_mode: d.quote_mode, created_at: d.created_at, updated_at: d.created_at,
          }).onConflict((oc) => oc.column('id').doNothing()).execute()
          break
        }
        case 'CarrierUpdated': {
          const { updated_at, ...changes } = e.data
          await db.updateTable('carriers').set({ ...changes, updated_at }).where('id', '=', carrierId).execute()
          break
        }
        case 'CarrierCertificationDecided': {
          const d = e.data
          await db.updateTable('carriers').set({ certification_status: d.status, updated_at: d.decided_at }).where('id', '=', carrierId).execute()
          break
        }
        case 'CarrierCredentialsIssued': {
          const d = e.data
          // Rotation: what was valid without end now ends at previous_expire_at (24 h overlap).
          if (d.previous_expire_at) {
            await db.updateTable('access_tokens').set({ expires_at: d.previous_expire_at })
              .where('kind', '=', 'carrier').where('subject_id', '=', carrierId).where('expires_at', 'is', null).execute()
            await db.updateTable('carrier_secrets').set({ expires_at: d.previous_expire_at })
              .where('carrier_id', '=', carrierId).where('expires_at', 'is', null).execute()
          }
          await db.insertInto('access_tokens').values({
            token_hash: d.key_hash, token_id: d.key_id, kind: 'carrier', subject_id: carrierId,
            created_at: d.issued_at, expires_at: null, revoked_at: null,
          }).onConflict((oc) => oc.column('token_hash').doNothing()).execute()
          await db.insertInto('carrier_secrets').values({
            secret_id: d.secret_id, carrier_id: carrierId, secret_encrypted: d.secret_encrypted, created_at: d.issued_at, expires_at: null,
          }).onConflict((oc) => oc.column('secret_id').doNothing()).execute()
          break
        }
        case 'ServiceTypeAdded': {
          const d = e.data
          await db.insertInto('service_types').values({ id: d.id, carrier_id: carrierId, code: d.code, name: d.name, created_at: d.added_at })
            .onConflict((oc) => oc.column('id').doNothing()).execute()
          break
        }
        default:
          break
      }
    }
  },
}))
