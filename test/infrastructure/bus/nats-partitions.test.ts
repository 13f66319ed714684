import t from 'tap'
import { partitionOf, unpartitioned, wireFilter, wireSubject } from '../../../src/infrastructure/bus/nats-partitions.js'
import { subjectMatches } from '../../../src/infrastructure/bus/subjects.js'

t.test('one key, one partition, in every process; keys spread over all partitions', async (t) => {
  t.equal(partitionOf('task-01KAB', 16), partitionOf('task-01KAB', 16))
  const used = new Set(Array.from({ length: 2000 }, (_, i) => partitionOf(`shipment-${i}`, 16)))
  t.equal(used.size, 16)
})

t.test('the partition token sits after the root and is gone on the way back', async (t) => {
  const wire = wireSubject('t1.', 'events.task.TaskStarted', 7)
  t.equal(wire, 't1.events.p7.task.TaskStarted')
  t.equal(unpartitioned(wire.slice('t1.'.length)), 'events.task.TaskStarted')
  t.equal(unpartitioned('events.task.TaskStarted'), 'events.task.TaskStarted', 'a subject without a token is left alone')
})

t.test('filters: one pattern in any or one partition; several under their root', async (t) => {
  const wire = (s: string, k: number) => wireSubject('', s, k)
  t.equal(wireFilter('', ['events.task.>']), 'events.*.task.>')
  t.ok(subjectMatches(wireFilter('', ['events.task.>'])!, wire('events.task.TaskStarted', 3)))
  t.ok(subjectMatches(wireFilter('', ['events.shipment.ShipmentCreated'])!, wire('events.shipment.ShipmentCreated', 9)))
  t.notOk(subjectMatches(wireFilter('', ['events.shipment.ShipmentCreated'])!, wire('events.shipment.ShipmentCancelled', 9)))
  const p3 = wireFilter('', ['events.task.TaskStarted', 'events.route.RouteStarted'], 3)!
  t.equal(p3, 'events.p3.>')
  t.ok(subjectMatches(p3, wire('events.route.RouteStarted', 3)))
  t.notOk(subjectMatches(p3, wire('events.route.RouteStarted', 4)), 'another partition is another consumer\'s')
  t.equal(wireFilter('', ['events.task.>', 'commands.x.y']), undefined, 'different roots: the whole stream')
  t.throws(() => wireFilter('', ['events.task.>', 'commands.x.y'], 1), /share their first token/)
})
