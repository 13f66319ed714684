import t from 'tap'
import type { RecordedEvent } from '../../../src/infrastructure/event-store/event-store.js'
import { upcasterFrom, upcasters } from '../../../src/infrastructure/event-store/upcasting.js'
import { currentSchemaVersion, eventRenames } from '../../../schemas/events/upcasters.js'

// Pure: a recorded event in, the current event out.

const stored = (type: string, data: unknown, schemaVersion = 1): RecordedEvent => ({
  id: 'e1', streamId: 'thing-1', streamVersion: 3, position: '7/9', type, data, schemaVersion,
  metadata: { actor: { kind: 'system', id: 'test' }, occurred_at: '2026-11-22T10:00:00.000Z' }, recordedAt: new Date('2026-11-22T10:00:01Z'),
})

t.test('a rename reads an old name as the new one; payload, version and the rest unchanged', async (t) => {
  const up = upcasterFrom({ renames: { OldName: 'NewName' } })
  const old = stored('OldName', { a: 1 })
  t.same(up(old), { ...old, type: 'NewName' })
  const current = stored('NewName', { a: 1 })
  t.equal(up(current), current, 'an event under the current name is passed through as it is')
  t.equal(up(stored('Other', {})).type, 'Other')
})

t.test('a name renamed twice reads as the last one; a cycle is refused when the table is made', async (t) => {
  const up = upcasterFrom({ renames: { A: 'B', B: 'C' } })
  t.equal(up(stored('A', {})).type, 'C')
  t.equal(up(stored('B', {})).type, 'C')
  t.throws(() => upcasterFrom({ renames: { A: 'B', B: 'A' } }), /cycle/)
})

t.test('version steps run per current name, after the rename, from the stored version on', async (t) => {
  const up = upcasterFrom({
    renames: { OldName: 'NewName' },
    steps: { NewName: { 1: (d: { a: number }) => ({ a: d.a, b: 0 }), 2: (d: { a: number; b: number }) => ({ ...d, c: d.a + 1 }) } },
  })
  t.match(up(stored('OldName', { a: 1 })), { type: 'NewName', data: { a: 1, b: 0, c: 2 }, schemaVersion: 3 })
  t.match(up(stored('NewName', { a: 5, b: 9 }, 2)), { type: 'NewName', data: { a: 5, b: 9, c: 6 }, schemaVersion: 3 })
  t.match(up(stored('NewName', { a: 5 }, 3)), { data: { a: 5 }, schemaVersion: 3 }, 'an event at the current version is not touched')
  t.match(upcasterFrom({ steps: { Plain: { 1: () => ({ x: true }) } } })(stored('Plain', {})), { type: 'Plain', data: { x: true }, schemaVersion: 2 })
})

t.test('a name of Object.prototype is not a rename nor a step', async (t) => {
  const up = upcasterFrom({ renames: { OldName: 'NewName' }, steps: { NewName: {} } })
  t.equal(up(stored('constructor', {})).type, 'constructor')
  t.equal(up(stored('toString', {})).type, 'toString')
})

t.test('the platform reads the design card names for the shipment events stored before the rename', async (t) => {
  t.same(eventRenames, { ShipmentDocumented: 'LabelUploaded', CarrierStatusReported: 'StatusReported' })
  t.equal(upcasters(stored('ShipmentDocumented', {})).type, 'LabelUploaded')
  t.equal(upcasters(stored('CarrierStatusReported', {})).type, 'StatusReported')
  t.equal(upcasters(stored('ShipmentCreated', {})).type, 'ShipmentCreated')
})

t.test('a TaskDelayed of version 1 reads with the task eta\'s names (issue 37): its minutes late, late since it was found late', async (t) => {
  const v1 = { ulid: 'T1', organization_id: 'o', route_id: 3, workflow_id: null, status: 'pending', eta: '2026-11-22T10:40:00.000Z', window_to: '2026-11-22T10:20:00.000Z', minutes_late: 20, delayed_at: '2026-11-22T10:05:00.000Z' }
  const read = upcasters(stored('TaskDelayed', v1))
  t.equal(read.schemaVersion, 2)
  t.same(read.data, { ...v1, late_by_minutes: 20, late_since: '2026-11-22T10:05:00.000Z' })
  const v2 = { ...v1, late_by_minutes: 21, late_since: '2026-11-22T10:01:00.000Z' }
  t.same(upcasters(stored('TaskDelayed', v2, 2)).data, v2, 'a version 2 event is read as written')
  t.equal(currentSchemaVersion('TaskDelayed'), 2, 'new ones are written at version 2')
  t.equal(currentSchemaVersion('TaskBackOnTime'), 1)
})
