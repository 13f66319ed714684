import { sql, type Kysely } from 'kysely'
import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { OrganizationEvents, PlaceEvents } from '../../schemas/events/organizations.js'
import { isEventOf, pick } from '../../schemas/events/event-map.js'
import { defineProjection, type Projection } from '../projection.js'
import { writesOnly } from '../recorded-writes.js'
import type { ReadModelDatabase } from '../read-model-database.js'
import { idOf } from '../../schemas/events/streams.js'
import { listContracts, type ContractRow } from './contract-listings.js'

/**
 * Change-notice topic: organizations whose row or tokens changed (what authenticating with one of
 * their tokens gives). New organizations and new tokens are not in it: nobody can have kept them.
 */
export const ORGANIZATION_ACCESS = 'organization_access'

const orgIdOf = (e: RecordedEvent) => idOf.organization(e.streamId)!

/** Inserts many rows in one statement (typed by the table's own row type); rows already there stay. */
async function insertIgnoring(db: Kysely<ReadModelDatabase>, schema: string, table: string, key: string, rows: object[]): Promise<void> {
  if (rows.length === 0) return
  const columns = sql.join(Object.keys(rows[0]!).map((c) => sql.id(c)))
  await sql`
    insert into ${sql.id(schema, table)} (${columns})
    select ${columns} from json_populate_recordset(null::${sql.id(schema, table)}, ${JSON.stringify(rows)}::json)
    on conflict (${sql.id(key)}) do nothing`.execute(db)
}

/** organizations, access_tokens (organization kind), places, contracts, contract_listings and their counts. */
export const organizationsProjection: Projection = writesOnly(defineProjection({
  name: 'organizations',
  events: { ...OrganizationEvents, ...PlaceEvents },
  // Set-based (rebuild speed, DESIGN §2): one statement per table per batch. Inserts first, then
  // the updates folded per row (last event wins), which is what applying the events in order gives.
  async apply(db, events, ctx) {
    const organizations: object[] = []
    const tokens: object[] = []
    const places: object[] = []
    const contracts: ContractRow[] = []
    const orgChanges = new Map<string, { id: string; set_suspended: boolean; suspended_at: string | null; set_address: boolean; operational_address_id: string | null; updated_at: string }>()
    const revoked = new Map<string, { token_id: string; revoked_at: string }>()
    const orgChange = (e: RecordedEvent) => {
      const id = orgIdOf(e)
      const c = orgChanges.get(id) ?? { id, set_suspended: false, suspended_at: null, set_address: false, operational_address_id: null, updated_at: e.metadata.occurred_at }
      c.updated_at = e.metadata.occurred_at
      orgChanges.set(id, c)
      return c
    }
    for (const e of events) {
      switch (e.type) {
        case 'OrganizationCreated': {
          const d = e.data
          organizations.push({
            id: d.id, internal_id: d.internal_id, name: d.name, subdomain: d.subdomain, roles: d.roles,
            currency: d.currency, locale: d.locale, timezone: d.timezone, market: d.market, custom_domain: null,
            carriers_enabled: d.carriers_enabled, operational_address_id: null, suspended_at: null,
            created_at: d.created_at, updated_at: d.created_at,
          })
          break
        }
        case 'TokenIssued': {
          const d = e.data
          tokens.push({
            token_hash: d.token_hash, token_id: d.token_id, kind: 'organization', subject_id: orgIdOf(e),
            created_at: d.issued_at, expires_at: null, revoked_at: null,
          })
          break
        }
        case 'TokenRevoked': {
          const d = e.data
          revoked.set(d.token_id, { token_id: d.token_id, revoked_at: d.revoked_at })
          break
        }
        case 'OrganizationSuspended': {
          const c = orgChange(e)
          c.set_suspended = true
          c.suspended_at = e.data.suspended_at
          break
        }
        case 'OrganizationUnsuspended': {
          const c = orgChange(e)
          c.set_suspended = true
          c.suspended_at = null
          break
        }
        case 'OperationalAddressSet': {
          const c = orgChange(e)
          c.set_address = true
          c.operational_address_id = e.data.place_id
          break
        }
        case 'ContractSigned': {
          const d = e.data
          contracts.push({ id: d.contract_id, carrier_id: d.carrier_id, shipper_id: d.shipper_id, status: 'active', signed_at: d.signed_at })
          break
        }
        case 'PlaceAdded': {
          const d = e.data
          places.push({
            id: d.id, organization_id: d.organization_id, org_internal_id: d.org_internal_id, name: d.name,
            street: d.street, street_number: d.street_number, floor: d.floor, apartment: d.apartment, reference: d.reference,
            phone_raw: d.phone_raw, phone: d.phone, email: d.email, zipcode: d.zipcode,
            city_id: d.city.id, city_name: d.city.name,
            state_id: d.state?.id ?? null, state_code: d.state?.code ?? null, state_name: d.state?.name ?? null,
            country_id: d.country.id, country_code: d.country.code, country_name: d.country.name,
            geo_latitude: d.geo_latitude, geo_longitude: d.geo_longitude, created_at: d.created_at,
          })
          break
        }
        default:
          break
      }
    }
    await insertIgnoring(db, ctx.schema, 'organizations', 'id', organizations)
    await insertIgnoring(db, ctx.schema, 'access_tokens', 'token_hash', tokens)
    await insertIgnoring(db, ctx.schema, 'places', 'id', places)
    await insertIgnoring(db, ctx.schema, 'contracts', 'id', contracts)
    // After the organizations they name (a batch may create both).
    await listContracts(db, ctx.schema, contracts)
    if (orgChanges.size) {
      await sql`
        update ${sql.id(ctx.schema, 'organizations')} o set
          suspended_at = case when u.set_suspended then u.suspended_at else o.suspended_at end,
          operational_address_id = case when u.set_address then u.operational_address_id else o.operational_address_id end,
          updated_at = u.updated_at
        from json_to_recordset(${JSON.stringify([...orgChanges.values()])}::json)
          as u(id text, set_suspended boolean, suspended_at timestamptz, set_address boolean, operational_address_id text, updated_at timestamptz)
        where o.id = u.id`.execute(db)
    }
    if (revoked.size) {
      await sql`
        update ${sql.id(ctx.schema, 'access_tokens')} t set revoked_at = u.revoked_at
        from json_to_recordset(${JSON.stringify([...revoked.values()])}::json) as u(token_id text, revoked_at timestamptz)
        where t.token_id = u.token_id`.execute(db)
    }
    // Rows stay a function of the events; the notice only expires copies kept elsewhere.
    ctx.changed(ORGANIZATION_ACCESS, events.filter((e) => isEventOf(ACCESS_CHANGING, e)).map(orgIdOf))
  },
}))

const ACCESS_CHANGING = pick(OrganizationEvents, 'TokenRevoked', 'OrganizationSuspended', 'OrganizationUnsuspended', 'OperationalAddressSet')
