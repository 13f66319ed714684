import type { PlaceAdded, PlaceEvents } from '../../schemas/events/organizations.js'
import type { EventOf } from '../../schemas/events/event-map.js'
import type { Decider } from '../shared/decider.js'
import { IllegalStateError } from '../shared/errors.js'
import { stream } from '../../schemas/events/streams.js'

/** A saved operational address of an organization: stream `place-<ple_id>`. */
export type PlaceEvent = EventOf<typeof PlaceEvents>
export interface PlaceState { exists: boolean }
export type AddPlace = { type: 'AddPlace'; data: PlaceAdded }

export const placeStream = stream.place

export const placeDecider: Decider<PlaceState, AddPlace, PlaceEvent> = {
  initialState: () => ({ exists: false }),
  evolve: (_s, e) => (e.type === 'PlaceAdded' ? { exists: true } : _s),
  decide(command, state) {
    if (state.exists) throw new IllegalStateError('The place already exists.', 'place_exists')
    return [{ type: 'PlaceAdded', data: command.data }]
  },
}
