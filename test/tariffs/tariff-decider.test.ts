import t from 'tap'
import { decider as activate } from '../../src/tariffs/activate-tariff.js'
import { decider as publish } from '../../src/tariffs/publish-rates.js'
import type { TariffEvent } from '../../src/tariffs/tariff.js'
import { IllegalStateError, NotFoundError } from '../../src/shared/errors.js'
import { DeciderSpecification } from '../helpers/decider-specification.js'
import { sampleRates } from './fixtures/sample-rates.js'

// Given events / when command / then events (or error), no database.

const activating = DeciderSpecification.for(activate)
const publishing = DeciderSpecification.for(publish)
const now = new Date('2026-11-22T10:00:00Z')
const created: TariffEvent = { type: 'TariffCreated', data: { id: 'trf_1', carrier_id: 'car_1', name: 'T', currency: 'ARS', service_type_id: 7, volumetric_divisor: 5000, created_at: now.toISOString() } }

t.test('tariff decider: rates before activation, and only the owning carrier', async (t) => {
  activating.given([created]).when({ type: 'ActivateTariff', data: { carrier_id: 'car_1', now } })
    .thenThrows(t, IllegalStateError, { code: 'tariff_without_rates' })
  publishing.given([created]).when({ type: 'PublishRates', data: { carrier_id: 'car_2', zones: [], rates: [], now } })
    .thenThrows(t, NotFoundError, { code: 'not_found', message: 'Tariff not found.' }) // another carrier's tariff is unknown
  const published = publishing.given([created]).when({ type: 'PublishRates', data: { carrier_id: 'car_1', zones: sampleRates.zones as any, rates: sampleRates.rates, now } })
    .then(t, [{ type: 'TariffRatesPublished', data: { zones: sampleRates.zones as any, rates: sampleRates.rates, published_at: now.toISOString() } }])
  activating.given([created, ...published]).when({ type: 'ActivateTariff', data: { carrier_id: 'car_1', now } }).then(t, [
    { type: 'TariffActivated', data: { carrier_id: 'car_1', service_type_id: 7, activated_at: now.toISOString() } },
  ])
})
