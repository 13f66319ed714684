import { BlueprintEvents, BlueprintKeyEvents, type BlueprintKeyReserved } from '../../schemas/events/blueprints.js'
import type { EventOf } from '../../schemas/events/event-map.js'
import { requireOwned } from '../shared/ownership.js'
import type { Step } from '../../schemas/api/blueprints.js'
import type { Decider } from '../shared/decider.js'
import { stream } from '../../schemas/events/streams.js'

/** The blueprint aggregate (DESIGN §3.9): versions of a recipe of steps; stream `blueprint-<id>`. */
export type BlueprintEvent = EventOf<typeof BlueprintKeyEvents & typeof BlueprintEvents>

export interface BlueprintContent { name: string; steps: Step[]; start_steps: string[] }

export interface BlueprintState {
  exists: boolean
  organizationId: string | null
  key: string
  /** The latest version and whether it is still a draft; published versions never change. */
  latest: number
  latestIsDraft: boolean
  draft: BlueprintContent | null
}

export const blueprintStream = stream.blueprint

export const initialState = (): BlueprintState => ({ exists: false, organizationId: null, key: '', latest: 0, latestIsDraft: false, draft: null })

export function evolve(state: BlueprintState, event: BlueprintEvent): BlueprintState {
  switch (event.type) {
    case 'BlueprintCreated': {
      const { name, steps, start_steps } = event.data
      return { exists: true, organizationId: event.data.organization_id, key: event.data.key, latest: event.data.version, latestIsDraft: true, draft: { name, steps, start_steps } }
    }
    case 'BlueprintDrafted': {
      const { name, steps, start_steps, version } = event.data
      return { ...state, latest: version, latestIsDraft: true, draft: { name, steps, start_steps } }
    }
    case 'BlueprintPublished':
      return { ...state, latestIsDraft: false }
    default:
      return state
  }
}

/** A command on an existing blueprint of the caller's organization (another tenant's is unknown). */
export function requireBlueprint(state: BlueprintState, organizationId: string): void {
  requireOwned(state, organizationId, 'Blueprint')
}

export const blueprintDeciderOf = <C>(decide: (command: C, state: BlueprintState) => BlueprintEvent[]): Decider<BlueprintState, C, BlueprintEvent> =>
  ({ decide, evolve, initialState })

/**
 * One event per organization and key, appended with the blueprint's creation in one atomic write:
 * two creations of one key race for this stream, so a key is unique without a look-up.
 */
export const blueprintKeyStream = stream.blueprintKey
