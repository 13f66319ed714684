import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import { streamCategory } from './stream-category.js'
import { pick } from '../../schemas/events/event-map.js'
import { TaskEvents } from '../../schemas/events/tasks.js'
import { RouteEvents, TaskRouteMarkers } from '../../schemas/events/routes.js'
import { TaskDelayEvents } from '../../schemas/events/task-delays.js'
import { ShipmentEvents } from '../../schemas/events/shipments.js'
import { StatusCatalogEvents } from '../../schemas/events/shipment-statuses.js'
import { WorkflowEvents, WorkflowStartEvents } from '../../schemas/events/workflows.js'

/** A subject token made from free text (an event type, a stream category): NATS allows no whitespace, '.', '*' or '>' in one. */
export const subjectToken = (text: string): string => text.replace(/[\s.*>]/g, '_') || '_'

/**
 * The events the relay publishes under each family (`events.<family>.<Type>`, the family being the
 * first word of a stream's name): the maps of every stream named so. A consumer picks its events
 * here by family and name, so a name no map has does not compile. A family joins when a consumer
 * first listens to it.
 */
const FAMILIES = {
  task: { ...TaskEvents, ...TaskRouteMarkers, ...TaskDelayEvents },
  route: RouteEvents,
  shipment: { ...ShipmentEvents, ...StatusCatalogEvents },
  workflow: { ...WorkflowEvents, ...WorkflowStartEvents },
} as const

export type Family = keyof typeof FAMILIES
export type EventsOf<F extends Family> = (typeof FAMILIES)[F]
export type EventName<F extends Family> = keyof EventsOf<F> & string

/** `events.<family>.<Type>`: the one spelling of an event's subject. */
const subject = (family: string, type: string): string => `events.${subjectToken(family)}.${subjectToken(type)}`

/** The subject the relay publishes an event on, e.g. `events.shipment.ShipmentCreated` for stream `shipment-42`. */
export const eventSubject = (e: Pick<RecordedEvent, 'streamId' | 'type'>): string => subject(streamCategory(e.streamId), e.type)

/** Some of a family's events, as a map: `isEventOf` narrows a relayed event to them, `eventNames` lists them. */
export const eventsOf = <F extends Family, N extends EventName<F>>(family: F, ...names: N[]): Pick<EventsOf<F>, N> =>
  pick(FAMILIES[family], ...names)

/** The subjects of a family's events in `events` (a map from `eventsOf`): a map of another family does not compile. */
export const subjectsOf = <F extends Family, N extends EventName<F>>(family: F, events: Pick<EventsOf<F>, N>): string[] =>
  Object.keys(events).map((type) => subject(family, type))

/** Every subject of a family (`events.task.>`): for a consumer that hears all of it and picks by the maps. */
export const familySubject = (family: Family): string => `events.${subjectToken(family)}.>`
