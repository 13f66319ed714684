import type { PlaceAdded, PlaceEvents } from '../../schemas/events/organizations.js'
import type { EventOf } from '../../schemas/events/event-map.js'
import { stream } from '../../schemas/events/streams.js'

/** A saved operational address of an organization: stream `place-<ple_id>`. */
export type PlaceEvent = EventOf<typeof PlaceEvents>
export interface PlaceState { exists: boolean }
export const placeStream = stream.place

export const initialState = (): PlaceState => ({ exists: false })

export const evolve = (state: PlaceState, event: PlaceEvent): PlaceState => (event.type === 'PlaceAdded' ? { exists: true } : state)
