import type { DelayEvent } from '../../src/etas/delay-task.js'

// The task stream the delay and back-on-time deciders fold, for their given/when/then specs: task
// T1 of org_1, a delivery of workflow 7 on route 3. Times are ISO strings the caller picks.

const address = {
  id: 'adr_1', created: true, organization_id: 'org_1', place_id: null, name: 'Ana', street: 'San Martín', street_number: '50', floor: null, apartment: null,
  reference: null, zipcode: null, phone: null, email: null, document_type: null, document_number: null, city: { id: 1, name: 'Rosario' },
  state: null, country: { id: 1, name: 'Argentina', iso: 'AR' }, geo_latitude: -32.9, geo_longitude: -60.6,
}

export const taskCreated = (window: { from: string; to: string }, createdAt: string): DelayEvent => ({
  type: 'TaskCreated',
  data: {
    ulid: 'T1', organization_id: 'org_1', type: 'delivery', address, shipment_id: null, workflow_id: 7, step_key: null, assignee_id: null,
    time_windows: [window], duration_minutes: null, dependencies: [],
    requirements: { complete: [], fail: [] }, load: { grams: 0, volume_cm3: 0, packages: 0 }, notes: null, external_reference: null,
    created_at: createdAt,
  },
})

export const taskRouted = (at: string): DelayEvent => ({ type: 'TaskRouted', data: { ulid: 'T1', organization_id: 'org_1', route_id: 3, routed_at: at } })
export const taskStarted = (at: string): DelayEvent => ({ type: 'TaskStarted', data: { ulid: 'T1', organization_id: 'org_1', route_id: 3, workflow_id: 7, started_at: at } })
