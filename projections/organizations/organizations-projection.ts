import { sql, type Kysely } from 'kysely'
import { AUTH_CHANGED_CHANNEL } from '../../src/http/auth-cache.js'
import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import type {
  ContractSigned, OperationalAddressSet, OrganizationCreated, OrganizationSuspended, PlaceAdded, TokenIssued, TokenRevoked,
} from '../../schemas/events/organizations.js'
import type { Projection } from '../projection.js'
import type { ReadModelDatabase } from '../read-model-database.js'

const orgIdOf = (e: RecordedEvent) => e.streamId.slice('organization-'.length)

/** organizations, access_tokens (organization kind), places, contracts. */
export const organizationsProjection: Projection = {
  name: 'organizations',
  handles: [
    'OrganizationCreated', 'TokenIssued', 'TokenRevoked', 'OrganizationSuspended', 'OrganizationUnsuspended',
    'ContractSigned', 'OperationalAddressSet', 'PlaceAdded',
  ],
  async apply(db: Kysely<ReadModelDatabase>, events: RecordedEvent[]) {
    for (const e of events) {
      const at = e.metadata.occurred_at
      switch (e.type) {
        case 'OrganizationCreated': {
          const d = e.data as OrganizationCreated
          await db.insertInto('organizations').values({
            id: d.id, internal_id: d.internal_id, name: d.name, subdomain: d.subdomain, roles: JSON.stringify(d.roles) as any,
            currency: d.currency, locale: d.locale, timezone: d.timezone, market: d.market, custom_domain: null,
            carriers_enabled: d.carriers_enabled, operational_address_id: null, suspended_at: null,
            created_at: d.created_at, updated_at: d.created_at,
          }).onConflict((oc) => oc.column('id').doNothing()).execute()
          break
        }
        case 'TokenIssued': {
          const d = e.data as TokenIssued
          await db.insertInto('access_tokens').values({
            token_hash: d.token_hash, token_id: d.token_id, kind: 'organization', subject_id: orgIdOf(e),
            created_at: d.issued_at, expires_at: null, revoked_at: null,
          }).onConflict((oc) => oc.column('token_hash').doNothing()).execute()
          break
        }
        case 'TokenRevoked': {
          const d = e.data as TokenRevoked
          await db.updateTable('access_tokens').set({ revoked_at: d.revoked_at }).where('token_id', '=', d.token_id).execute()
          break
        }
        case 'OrganizationSuspended': {
          const d = e.data as OrganizationSuspended
          await db.updateTable('organizations').set({ suspended_at: d.suspended_at, updated_at: at }).where('id', '=', orgIdOf(e)).execute()
          break
        }
        case 'OrganizationUnsuspended':
          await db.updateTable('organizations').set({ suspended_at: null, updated_at: at }).where('id', '=', orgIdOf(e)).execute()
          break
        case 'OperationalAddressSet': {
          const d = e.data as OperationalAddressSet
          await db.updateTable('organizations').set({ operational_address_id: d.place_id, updated_at: at }).where('id', '=', orgIdOf(e)).execute()
          break
        }
        case 'ContractSigned': {
          const d = e.data as ContractSigned
          await db.insertInto('contracts').values({
            id: d.contract_id, carrier_id: d.carrier_id, shipper_id: d.shipper_id, status: 'active', signed_at: d.signed_at,
          }).onConflict((oc) => oc.column('id').doNothing()).execute()
          break
        }
        case 'PlaceAdded': {
          const d = e.data as PlaceAdded
          await db.insertInto('places').values({
            id: d.id, organization_id: d.organization_id, org_internal_id: d.org_internal_id, name: d.name,
            street: d.street, street_number: d.street_number, floor: d.floor, apartment: d.apartment, reference: d.reference,
            phone_raw: d.phone_raw, phone: d.phone, email: d.email, zipcode: d.zipcode,
            city_id: d.city.id, city_name: d.city.name,
            state_id: d.state?.id ?? null, state_code: d.state?.code ?? null, state_name: d.state?.name ?? null,
            country_id: d.country.id, country_code: d.country.code, country_name: d.country.name,
            geo_latitude: d.geo_latitude, geo_longitude: d.geo_longitude, created_at: d.created_at,
          }).onConflict((oc) => oc.column('id').doNothing()).execute()
          break
        }
        default:
          break
      }
    }
    // Processes cache token → organization (src/http/auth-cache.ts): tell them, on commit, which
    // organizations changed. Rows stay a function of the events; this only expires caches.
    const changed = new Set(events.filter((e) => AUTH_RELEVANT.has(e.type)).map(orgIdOf))
    for (const orgId of changed) await sql`select pg_notify(${AUTH_CHANGED_CHANNEL}, ${orgId})`.execute(db)
  },
}

const AUTH_RELEVANT = new Set(['TokenRevoked', 'OrganizationSuspended', 'OrganizationUnsuspended', 'OperationalAddressSet'])
