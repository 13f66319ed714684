import t from 'tap'
import { eventsOf, eventSubject, familySubject, subjectsOf } from '../../src/shared/event-subjects.js'
import { subjectMatches } from '../../src/infrastructure/bus/subjects.js'
import { eventNames, isEventName, isEventOf } from '../../schemas/events/event-map.js'
import { stream } from '../../schemas/events/streams.js'

t.test('a family\'s subjects are the ones the relay publishes its streams\' events on', async (t) => {
  const cases = [
    ['task', stream.task('01JTASK'), eventsOf('task', 'TaskStarted', 'TaskRouted', 'TaskDelayed')],
    ['route', stream.route(7), eventsOf('route', 'RouteStarted', 'RouteTaskRemoved')],
    ['shipment', stream.shipment(42), eventsOf('shipment', 'ShipmentCreated', 'ShipmentExpired')],
    ['shipment', stream.statusCatalog('org_1'), eventsOf('shipment', 'ShipmentStatusCustomized')],
    ['workflow', stream.workflow(3), eventsOf('workflow', 'WorkflowCompleted')],
    ['workflow', stream.workflowStart('key'), eventsOf('workflow', 'WorkflowStartReserved')],
  ] as const
  for (const [family, streamId, events] of cases) {
    const published = eventNames(events).map((type) => eventSubject({ streamId, type }))
    t.same(subjectsOf(family, events), published, streamId)
    t.ok(published.every((s) => subjectMatches(familySubject(family), s)), `${streamId} in ${familySubject(family)}`)
  }
  t.same(subjectsOf('task', eventsOf('task', 'TaskStarted', 'TaskCompleted')), ['events.task.TaskStarted', 'events.task.TaskCompleted'])
})

t.test('a picked map narrows an event by its names, and tells its names from others', async (t) => {
  const steps = eventsOf('task', 'TaskCompleted', 'TaskFailed')
  const e = { type: 'TaskFailed', data: { reason: 'no_answer' } as unknown }
  t.ok(isEventOf(steps, e) && e.type === 'TaskFailed' && e.data.reason === 'no_answer')
  t.notOk(isEventOf(steps, { type: 'TaskStarted', data: {} }))
  t.ok(isEventName(steps, 'TaskCompleted'))
  t.notOk(isEventName(steps, 'toString'), 'own names only')
})

t.test('a name no map of the family has does not compile', async (t) => {
  // These lines are checked by `tsc --noEmit` (test/ is in tsconfig's include): each must be an error.
  // @ts-expect-error misspelt
  eventsOf('task', 'TaskCompletd')
  // @ts-expect-error another family's event
  eventsOf('route', 'TaskStarted')
  // @ts-expect-error a map of another family
  subjectsOf('route', eventsOf('task', 'TaskStarted'))
  t.pass()
})
