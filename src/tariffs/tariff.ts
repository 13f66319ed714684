import type { Decider } from '../shared/decider.js'
import { NotFoundError } from '../shared/errors.js'
import { TariffEvents } from '../../schemas/events/tariffs.js'
import type { EventOf } from '../../schemas/events/event-map.js'
import { stream } from '../../schemas/events/streams.js'

/**
 * The tariff aggregate (DESIGN §3.5): stream `tariff-<trf_id>`; one per service type is active.
 * Each command is a slice with its decider and route: create-tariff.ts, publish-rates.ts, activate-tariff.ts.
 */
export type TariffEvent = EventOf<typeof TariffEvents>

export interface TariffState {
  exists: boolean
  carrierId: string | null
  serviceTypeId: number | null
  hasRates: boolean
}

export const tariffStream = stream.tariff

export const initialState = (): TariffState => ({ exists: false, carrierId: null, serviceTypeId: null, hasRates: false })

export function evolve(state: TariffState, event: TariffEvent): TariffState {
  switch (event.type) {
    case 'TariffCreated':
      return { ...state, exists: true, carrierId: event.data.carrier_id, serviceTypeId: event.data.service_type_id }
    case 'TariffRatesPublished':
      return { ...state, hasRates: event.data.rates.length > 0 }
    default:
      return state
  }
}

/** Another carrier's tariff is as unknown as a missing one. */
export function requireCarrierTariff(state: TariffState, carrierId: string): void {
  if (!state.exists || state.carrierId !== carrierId) throw new NotFoundError('Tariff')
}

/** A slice's decider: its own `decide` over the aggregate's state and `evolve`. */
export const tariffDeciderOf = <Command>(decide: (command: Command, state: TariffState) => TariffEvent[]): Decider<TariffState, Command, TariffEvent> =>
  ({ initialState, evolve, decide })
