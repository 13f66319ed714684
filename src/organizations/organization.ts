import { OrganizationEvents } from '../../schemas/events/organizations.js'
import type { EventOf } from '../../schemas/events/event-map.js'
import { stream } from '../../schemas/events/streams.js'
import type { Decider } from '../shared/decider.js'
import { NotFoundError } from '../shared/errors.js'

/** The organization aggregate: stream `organization-<org_id>`. */
export type OrganizationEvent = EventOf<typeof OrganizationEvents>

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

/** A command on an organization that must exist (404 otherwise). */
export function requireOrganization(state: OrganizationState): void {
  if (!state.exists) throw new NotFoundError('Organization')
}

/** A slice's decider: its decide with the organization's evolve and initial state. */
export const organizationDeciderOf = <C>(decide: (command: C, state: OrganizationState) => OrganizationEvent[]): Decider<OrganizationState, C, OrganizationEvent> =>
  ({ decide, evolve, initialState })

/** The place becomes the organization's operational address (a new place asked for it, or the organization had none). */
export interface SetOperationalAddress { type: 'SetOperationalAddress'; data: { place_id: string } }

/** Always recorded: the latest place named is the operational address. */
export const operationalAddressDecider = organizationDeciderOf((command: SetOperationalAddress): OrganizationEvent[] =>
  [{ type: 'OperationalAddressSet', data: { place_id: command.data.place_id } }])
