import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { TariffEvents } from '../../schemas/events/tariffs.js'
import { defineProjection, type Projection } from '../projection.js'
import { writesOnly } from '../recorded-writes.js'
import { idOf } from '../../schemas/events/streams.js'

const tariffIdOf = (e: RecordedEvent) => idOf.tariff(e.streamId)!

/** tariffs: one row per tariff, `active` true for at most one per service type (the last activated). */
export const tariffsProjection: Projection = writesOnly(defineProjection({
  name: 'tariffs',
  events: TariffEvents,
  async apply(db, events) {
    for (const e of events) {
      const id = tariffIdOf(e)
      switch (e.type) {
        case 'TariffCreated': {
          const d = e.data
          await db.insertInto('tariffs').values({
            id: d.id, carrier_id: d.carrier_id, service_type_id: d.service_type_id, name: d.name, currency: d.currency,
            volumetric_divisor: d.volumetric_divisor, zones: null, rates: null, active: false,
            rates_published_at: null, activated_at: null, created_at: d.created_at, updated_at: d.created_at,
          }).onConflict((oc) => oc.column('id').doNothing()).execute()
          break
        }
        case 'TariffRatesPublished': {
          const d = e.data
          await db.updateTable('tariffs').set({
            zones: JSON.stringify(d.zones), rates: JSON.stringify(d.rates), rates_published_at: d.published_at, updated_at: d.published_at,
          }).where('id', '=', id).execute()
          break
        }
        case 'TariffActivated': {
          const d = e.data
          await db.updateTable('tariffs').set({ active: false, updated_at: d.activated_at })
            .where('service_type_id', '=', d.service_type_id).where('active', '=', true).where('id', '!=', id).execute()
          await db.updateTable('tariffs').set({ active: true, activated_at: d.activated_at, updated_at: d.activated_at })
            .where('id', '=', id).execute()
          break
        }
        default:
          break
      }
    }
  },
}))
