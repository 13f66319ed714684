import { OrganizationEvents } from '../../schemas/events/organizations.js'
import { eventNames, type EventOf } from '../../schemas/events/event-map.js'
import { stream } from '../../schemas/events/streams.js'

/** The organization aggregate: stream `organization-<org_id>`. */
export type OrganizationEvent = EventOf<typeof OrganizationEvents>

export const organizationEventTypes = eventNames(OrganizationEvents)

export interface OrganizationState {
  exists: boolean
  id: string | null
  roles: string[]
  suspended: boolean
  tokens: Map<string, { revoked: boolean }>
  /** Carriers this organization (as shipper) holds an active contract with. */
  carriersUnderContract: Set<string>
}

export const streamOf = stream.organization

export const initialState = (): OrganizationState => ({
  exists: false, id: null, roles: [], suspended: false, tokens: new Map(), carriersUnderContract: new Set(),
})

export function evolve(state: OrganizationState, event: OrganizationEvent): OrganizationState {
  switch (event.type) {
    case 'OrganizationCreated':
      return { ...state, exists: true, id: event.data.id, roles: event.data.roles }
    case 'TokenIssued':
      return { ...state, tokens: new Map(state.tokens).set(event.data.token_id, { revoked: false }) }
    case 'TokenRevoked':
      return { ...state, tokens: new Map(state.tokens).set(event.data.token_id, { revoked: true }) }
    case 'OrganizationSuspended':
      return { ...state, suspended: true }
    case 'OrganizationUnsuspended':
      return { ...state, suspended: false }
    case 'ContractSigned':
      return { ...state, carriersUnderContract: new Set(state.carriersUnderContract).add(event.data.carrier_id) }
    default:
      return state
  }
}
