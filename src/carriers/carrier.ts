import { CarrierEvents } from '../../schemas/events/carriers.js'
import type { EventOf } from '../../schemas/events/event-map.js'
import { stream } from '../../schemas/events/streams.js'

/** The carrier aggregate (DESIGN §3.5): stream `carrier-<car_id>`. */
export type CarrierEvent = EventOf<typeof CarrierEvents>

export type CertificationStatus = 'not_required' | 'pending' | 'certified' | 'rejected'

export interface CarrierState {
  exists: boolean
  id: string | null
  organizationId: string | null
  visibility: 'private' | 'public'
  certification: CertificationStatus
  /** Service type code → id. */
  serviceTypes: Map<string, number>
}

export const carrierStream = stream.carrier

export const initialState = (): CarrierState => ({
  exists: false, id: null, organizationId: null, visibility: 'private', certification: 'not_required', serviceTypes: new Map(),
})

export function evolve(state: CarrierState, event: CarrierEvent): CarrierState {
  switch (event.type) {
    case 'CarrierCreated':
      return {
        ...state, exists: true, id: event.data.id, organizationId: event.data.organization_id,
        visibility: event.data.visibility, certification: event.data.certification_status as CertificationStatus,
      }
    case 'CarrierUpdated':
      return {
        ...state,
        visibility: event.data.visibility ?? state.visibility,
        certification: (event.data.certification_status as CertificationStatus | undefined) ?? state.certification,
      }
    case 'CarrierCertificationDecided':
      return { ...state, certification: event.data.status }
    case 'ServiceTypeAdded':
      return { ...state, serviceTypes: new Map(state.serviceTypes).set(event.data.code, event.data.id) }
    default:
      return state
  }
}

/** A private carrier needs no certification; a public one waits for the platform operator. */
export const certificationFor = (visibility: 'private' | 'public', current?: CertificationStatus): CertificationStatus => {
  if (visibility === 'private') return 'not_required'
  return current === 'certified' || current === 'rejected' ? current : 'pending'
}
