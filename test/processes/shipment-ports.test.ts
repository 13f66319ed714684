// The workflows port of service_routes shipments, as the reaction calls it: from the shipment's event
// alone (no shipments read model needed), idempotent by key, and a cancel that finds the workflow by
// the start's reservation even before any read model shows it.
import t from 'tap'
import { build } from '../helpers/build.js'
import { shipmentWorkflows } from '../../src/processes/shipment-ports.js'
import { shipmentWorkflowKey } from '../../src/processes/service-routes-shipments.js'
import { workflowStream } from '../../src/workflows/workflow.js'
import { newAddress } from '../workflows/fixtures.js'

t.test('start from the event\'s facts, twice with one key: one workflow; a cancel at once finds and cancels it', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ roles: ['carrier'], currency: 'ARS' })
  // A shipment id no read model has: the facts come with the call, as the reaction takes them from ShipmentCreated.
  const shipmentId = 987_654
  const place = await h.call('POST', '/api/v1/organizations/my/places', { token: carrier.token, body: newAddress() })
  t.equal(place.statusCode, 201, place.body)
  const address = place.json().place.address ?? place.json().place
  const facts = { origin: address, destination: address, load: { grams: 1500, volume_cm3: 6000, packages: 2 } }
  const ctx = (verb: 'start' | 'cancel') => ({ now: new Date(), actor: { kind: 'system' as const, id: 'test' }, idempotencyKey: shipmentWorkflowKey(shipmentId, verb) })

  const first = await shipmentWorkflows.startShipmentWorkflow(h.platform, carrier.id, { blueprint_key: 'delivery', data: { shipment_id: shipmentId }, shipment: facts }, ctx('start'))
  const again = await shipmentWorkflows.startShipmentWorkflow(h.platform, carrier.id, { blueprint_key: 'delivery', data: { shipment_id: shipmentId }, shipment: facts }, ctx('start'))
  t.type(first, 'number')
  t.equal(again, first, 'the same key: the same workflow, nothing new made')
  const created = (await h.platform.store.readStream(workflowStream(first as number)))[0]!
  t.match(created.data, { shipment_id: shipmentId, load: facts.load }, 'the load is the event\'s')

  await shipmentWorkflows.cancelShipmentWorkflow(h.platform, carrier.id, { shipment_id: shipmentId }, ctx('cancel'))
  const types = (await h.platform.store.readStream(workflowStream(first as number))).map((e) => e.type)
  t.ok(types.includes('WorkflowCancelled'), 'cancelled, found by the reservation stream, not the read model')
  await shipmentWorkflows.cancelShipmentWorkflow(h.platform, carrier.id, { shipment_id: shipmentId }, ctx('cancel'))
  t.equal((await h.platform.store.readStream(workflowStream(first as number))).filter((e) => e.type === 'WorkflowCancelled').length, 1, 'a second cancel changes nothing')
  await shipmentWorkflows.cancelShipmentWorkflow(h.platform, carrier.id, { shipment_id: shipmentId + 1 }, ctx('cancel'))
  t.pass('a shipment whose start made nothing: nothing to cancel')
})
