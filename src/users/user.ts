import { UserEvents } from '../../schemas/events/users.js'
import type { EventOf } from '../../schemas/events/event-map.js'
import { requireOwned } from '../shared/ownership.js'
import type { Decider } from '../shared/decider.js'
import { IllegalStateError } from '../shared/errors.js'
import { stream } from '../../schemas/events/streams.js'

/** The user aggregate (DESIGN §3.9): a dispatcher or a driver of an organization; stream `user-<usr_id>`. */
export type UserEvent = EventOf<typeof UserEvents>

export interface UserState {
  exists: boolean
  organizationId: string | null
  role: 'dispatcher' | 'driver' | null
  active: boolean
  /** The user's sign-in links by id: the code's hash, until when it opens, and whether it is spent (used or revoked). */
  signInLinks: ReadonlyMap<string, SignInLinkState>
}

export interface SignInLinkState { codeHash: string; expiresAt: string; spent: 'redeemed' | 'revoked' | null }

export const userStream = stream.user

export const initialState = (): UserState => ({ exists: false, organizationId: null, role: null, active: false, signInLinks: new Map() })

export function evolve(state: UserState, event: UserEvent): UserState {
  switch (event.type) {
    case 'UserCreated':
      return { ...state, exists: true, organizationId: event.data.organization_id, role: event.data.role, active: true }
    case 'UserUpdated':
      return { ...state, role: event.data.role ?? state.role }
    case 'UserDeactivated':
      return { ...state, active: false }
    case 'UserSignInLinkCreated':
      return { ...state, signInLinks: new Map(state.signInLinks).set(event.data.link_id, { codeHash: event.data.code_hash, expiresAt: event.data.expires_at, spent: null }) }
    case 'UserSignInLinkRedeemed':
    case 'UserSignInLinkRevoked': {
      const link = state.signInLinks.get(event.data.link_id)
      if (!link) return state
      const spent = event.type === 'UserSignInLinkRedeemed' ? 'redeemed' : 'revoked'
      return { ...state, signInLinks: new Map(state.signInLinks).set(event.data.link_id, { ...link, spent }) }
    }
    default:
      return state
  }
}

/** A command on an existing user of the caller's organization (another tenant's user is unknown). */
export function requireUser(state: UserState, organizationId: string): void {
  requireOwned(state, organizationId, 'User')
}

export function requireActive(state: UserState): void {
  if (!state.active) throw new IllegalStateError('The user is deactivated.', 'user_deactivated')
}

/** A decider for one command of this aggregate: the command's own `decide` with the shared `evolve`. */
export const userDeciderOf = <C>(decide: (command: C, state: UserState) => UserEvent[]): Decider<UserState, C, UserEvent> =>
  ({ decide, evolve, initialState })
