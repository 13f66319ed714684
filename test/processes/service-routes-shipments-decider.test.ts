import t from 'tap'
import { ReactionSpecification } from '../helpers/reaction-specification.js'
import { decider, serviceRoutesShipments, shipmentFacts, type ServiceRoutesShipmentsCommand } from '../../src/processes/service-routes-shipments.js'
import { send as sendAny } from '../../src/processes/reaction.js'
import type { ShipmentCreated } from '../../schemas/events/shipments.js'
import { shipmentCreated } from '../shipments/fixtures/shipment-created.js'

// Given the shipment's history / when a relayed shipment event / then the workflow calls. No database.

const now = new Date('2026-11-29T09:00:00Z')
const at = now.toISOString()
const spec = ReactionSpecification.for(decider)
const send = (command: ServiceRoutesShipmentsCommand) => sendAny(command)
const routesCarrier = { id: 'org_routes', internal_id: 9, name: 'Routes', subdomain: 'routes' }
const routes = (over: Partial<ShipmentCreated> = {}) => shipmentCreated({ id: 42, integration: 'service_routes', carrier: routesCarrier, ...over })

const created = (data: ShipmentCreated) => ({ message: { id: 'ev-1', streamId: 'shipment-42', streamVersion: 1, type: 'ShipmentCreated' as const, data }, now })
const cancelled = { message: { id: 'ev-2', streamId: 'shipment-42', streamVersion: 2, type: 'ShipmentCancelled' as const, data: { cancelled_at: at, reason: null } }, now }
const expired = { message: { id: 'ev-3', streamId: 'shipment-42', streamVersion: 2, type: 'ShipmentExpired' as const, data: { expired_at: at } }, now }
const history = (data: ShipmentCreated) => [{ type: 'ShipmentCreated' as const, data }]

t.test('a created shipment of a service_routes carrier starts its carrier organization\'s workflow, with the facts of its event', async (t) => {
  const plain = routes()
  spec.given([]).when(created(plain)).then(t, [send({
    type: 'StartShipmentWorkflow',
    data: { carrier_organization_id: 'org_routes', blueprint_key: 'delivery', shipment_id: 42, shipment: shipmentFacts(plain), key: 'shipment:42:start-workflow' },
  })])
  const pickup = routes({ requires_pickup: true })
  spec.given([]).when(created(pickup)).then(t, [send({
    type: 'StartShipmentWorkflow',
    data: { carrier_organization_id: 'org_routes', blueprint_key: 'pickup-delivery', shipment_id: 42, shipment: shipmentFacts(pickup), key: 'shipment:42:start-workflow' },
  })], 'requires_pickup: pickup-delivery')
  spec.given([]).when(created(shipmentCreated({ integration: 'custom' }))).thenIgnores(t, /custom/)
})

t.test('an annulled shipment of a service_routes carrier cancels its workflow; any other is nothing to do', async (t) => {
  const cancel = send({ type: 'CancelShipmentWorkflow', data: { carrier_organization_id: 'org_routes', shipment_id: 42, key: 'shipment:42:cancel-workflow' } })
  spec.given(history(routes())).when(cancelled).then(t, [cancel])
  spec.given(history(routes())).when(expired).then(t, [cancel], 'expired: the same')
  spec.given(history(shipmentCreated({ integration: 'custom' }))).when(cancelled).thenIgnores(t, /service_routes/)
  spec.given([]).when(cancelled).thenIgnores(t, /service_routes/, 'a shipment its stream does not know')
})

t.test('a start reads nothing; a cancel reads the shipment\'s stream', async (t) => {
  const reaction = serviceRoutesShipments({ startShipmentWorkflow: async () => undefined, cancelShipmentWorkflow: async () => undefined })
  t.same(reaction.load(created(routes()).message), null)
  t.same(reaction.load(cancelled.message), { stream: 'shipment-42' })
  t.same(reaction.load(expired.message), { stream: 'shipment-42' })
  t.match(reaction.options, { name: 'service-routes-shipments', ordered: true, subjects: ['events.shipment.ShipmentCreated', 'events.shipment.ShipmentCancelled', 'events.shipment.ShipmentExpired'] })
})
