import t from 'tap'
import { ReactionSpecification } from '../helpers/reaction-specification.js'
import { expiryDecider, expiryTimerChange, shipmentExpiry, type ExpiryCommand } from '../../src/processes/shipment-expiry.js'
import { retry, send as sendAny } from '../../src/processes/reaction.js'

// When the expiry timer's message comes / then the aggregate's ExpireShipment, or later. No database.

const spec = ReactionSpecification.for(expiryDecider)
const send = (command: ExpiryCommand) => sendAny(command)
const fireAt = '2026-11-29T09:00:00.000Z'
const message = { shipment_id: 42, fire_at: fireAt }

t.test('a firing due by this process\'s clock sends ExpireShipment at that clock', async (t) => {
  spec.given([]).when({ message, now: new Date(fireAt) }).then(t, [send({ type: 'ExpireShipment', data: { shipment_id: 42, now: fireAt } })])
  spec.given([]).when({ message, now: new Date('2026-11-29T10:00:00.000Z') })
    .then(t, [send({ type: 'ExpireShipment', data: { shipment_id: 42, now: '2026-11-29T10:00:00.000Z' } })], 'late: the aggregate decides')
})

t.test('a firing ahead of this process\'s clock comes again once the difference is waited out', async (t) => {
  spec.given([]).when({ message, now: new Date(Date.parse(fireAt) - 250) }).then(t, [retry(260, 'fired ahead of this process\'s clock')])
})

t.test('it takes the timer\'s command subject, reading no stream', async (t) => {
  t.same(shipmentExpiry.options, { name: 'shipment-expiry', subjects: ['commands.shipment.expire'] })
  t.equal(shipmentExpiry.source.from, 'commands')
  t.equal(shipmentExpiry.load(message), null)
})

t.test('the scheduler: a created shipment\'s timer at created_at + the expiry hours; any later event of it cancels the timer', async (t) => {
  const created = { id: 'e1', streamId: 'shipment-42', streamVersion: 1, type: 'ShipmentCreated', data: { created_at: '2026-11-29T09:00:00.000Z' } } as Parameters<typeof expiryTimerChange>[0]
  t.same(expiryTimerChange(created, 48), [{
    schedule: {
      id: 'expire-shipment-42', fireAt: new Date('2026-12-01T09:00:00.000Z'), subject: 'commands.shipment.expire',
      data: { shipment_id: 42, fire_at: '2026-12-01T09:00:00.000Z' }, key: 'shipment-42',
    },
  }])
  for (const type of ['ShipmentReady', 'ShipmentCancelled', 'ShipmentExpired'] as const) {
    const later = { id: 'e2', streamId: 'shipment-42', streamVersion: 2, type, data: {} } as unknown as Parameters<typeof expiryTimerChange>[0]
    t.same(expiryTimerChange(later, 48), [{ cancel: 'expire-shipment-42' }], type)
  }
  t.same(expiryTimerChange({ ...created, streamId: 'task-X' }, 48), [], 'not a shipment\'s stream: nothing')
})
