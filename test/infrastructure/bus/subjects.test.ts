import fc from 'fast-check'
import t from 'tap'
import { assertPattern, assertSubject, patternsToRegex, subjectMatches, subjectToken } from '../../../src/infrastructure/bus/subjects.js'

t.test('NATS wildcard matching', async (t) => {
  t.ok(subjectMatches('events.shipment.>', 'events.shipment.ShipmentCreated'))
  t.ok(subjectMatches('events.*.ShipmentCreated', 'events.shipment.ShipmentCreated'))
  t.notOk(subjectMatches('events.shipment.>', 'events.shipment'), '> needs at least one more token')
  t.notOk(subjectMatches('events.*', 'events.shipment.X'), '* is one token')
  t.notOk(subjectMatches('events.carrier.>', 'events.shipment.X'))
})

t.test('the SQL regular expression matches exactly what NATS matches', async (t) => {
  const token = fc.constantFrom('events', 'commands', 'shipment', 'carrier', 'A', 'b_c', 'x-y')
  const subject = fc.array(token, { minLength: 1, maxLength: 5 }).map((ts) => ts.join('.'))
  const pattern = fc.array(fc.oneof(token, fc.constant('*')), { minLength: 1, maxLength: 4 })
    .chain((ts) => fc.boolean().map((tail) => (tail ? [...ts, '>'] : ts).join('.')))
  fc.assert(fc.property(fc.array(pattern, { minLength: 1, maxLength: 3 }), subject, (patterns, s) => {
    const regex = new RegExp(patternsToRegex(patterns))
    return regex.test(s) === patterns.some((p) => subjectMatches(p, s))
  }), { numRuns: 2000 })
  t.pass('2000 random pattern sets agree')
})

t.test('subjects and patterns are validated', async (t) => {
  t.doesNotThrow(() => assertSubject('events.shipment.ShipmentCreated'))
  t.throws(() => assertSubject('orders.created'), /must start with/)
  t.throws(() => assertSubject('events..x'), /invalid bus subject/)
  t.throws(() => assertSubject('events.a b'), /invalid bus subject/)
  t.doesNotThrow(() => assertPattern('events.*.>'))
  t.throws(() => assertPattern('events.>.x'), /invalid subject pattern/)
  t.equal(subjectToken('Shipment Created.v2'), 'Shipment_Created_v2')
})
