import { type Kysely, sql } from 'kysely'
import t, { type Test } from 'tap'
import { rebuildReadModels } from '../../src/cli/rebuild.js'
import { eventSubject } from '../../src/processes/relay.js'
import { eventRenames } from '../../schemas/events/upcasters.js'
import * as statusHistoryNames from '../../projections/migrations/2026-11-24T00-21-status-history-event-names.js'
import { readModelChecksums } from '../helpers/read-model-checksums.js'
import { build, type TestApp } from '../helpers/build.js'
import { readAllVisible } from '../helpers/read-all-visible.js'
import { multipart } from '../carriers/fixtures/multipart.js'

// ShipmentDocumented and CarrierStatusReported were renamed LabelUploaded and StatusReported (the
// design card's names) by upcasting, not by rewriting the log: a log written under the old names
// must give the read models the same rows as the same history under the new names.

const TABLES = ['shipments', 'shipment_packages', 'addresses', 'shipment_status_history', 'shipment_attachments', 'shipment_status_catalog']
const address = { name: 'Ana', street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR' }
const OLD_NAME = Object.fromEntries(Object.entries(eventRenames).map(([old, current]) => [current, old]))

const checksums = (db: Kysely<any>) => readModelChecksums(db, TABLES)

const caughtUp = async (h: TestApp) => h.platform.projections.waitFor(await h.platform.store.headPosition(), 10_000)
const storedTypes = async (h: TestApp) =>
  (await sql<{ type: string }>`select distinct type from es_events order by type`.execute(h.platform.db)).rows.map((r) => r.type)

/** Two custom-carrier shipments: labels uploaded (one replaced), statuses reported (a return, a delivery). */
async function historyThroughTheApi(t: Test, h: TestApp) {
  const org = await h.createOrganization({ roles: ['carrier', 'shipper'], carriers_enabled: true })
  const created = await h.call('POST', '/api/v1/carriers', { token: org.token, body: { name: 'Hub', integration: 'custom', visibility: 'private', service_types: [{ code: 'express', name: 'Express' }] } })
  t.equal(created.statusCode, 201, created.body)
  const key = created.json().api_key
  const ids: number[] = []
  for (let i = 0; i < 2; i++) {
    const res = await h.call('POST', '/api/v1/shipments', {
      token: org.token, body: { carrier_id: org.id, service_type_code: 'express', origin: address, destination: { ...address, name: `R${i}` }, packages: [{ grams: 100 + i, length: 1, width: 1, height: 1 }] },
    })
    t.equal(res.statusCode, 201, res.body)
    ids.push(res.json().shipment.id)
  }
  const upload = async (id: number, files: Record<string, Buffer>) => {
    const m = multipart(files)
    const res = await h.app.inject({ method: 'POST', url: `/carrier/v1/shipments/${id}/documents`, headers: { authorization: `Bearer ${key}`, ...m.headers }, payload: m.payload })
    t.equal(res.statusCode, 200, res.body)
  }
  const report = async (id: number, body: Record<string, string>) => {
    const res = await h.call('POST', `/carrier/v1/shipments/${id}/status`, { token: key, body })
    t.equal(res.statusCode, 200, res.body)
  }
  const [a, b] = ids as [number, number]
  await upload(a, { label: Buffer.from('%PDF-1.4 a') })
  t.equal((await h.call('POST', `/api/v1/shipments/${a}/ready`, { token: org.token })).statusCode, 200)
  await report(a, { status: 'received' })
  await report(a, { status: 'failed_delivery', reason: 'rejected', message: 'refused at the door' })
  await report(a, { status: 'returned' })
  await upload(b, { label: Buffer.from('%PDF-1.4 b'), label_zpl: Buffer.from('^XA^XZ') })
  await upload(b, { label: Buffer.from('%PDF-1.4 b, corrected') })
  await report(b, { status: 'received' })
  await report(b, { status: 'delivered' })
  return { token: org.token, ids }
}

t.test('a log written under the old event names rebuilds into the rows of the same history under the new names', async (t) => {
  const current = await build(t)
  const { token, ids } = await historyThroughTheApi(t, current)
  t.equal(await caughtUp(current), true)
  t.same(await storedTypes(current).then((types) => types.filter((x) => x in eventRenames || x in OLD_NAME)), ['LabelUploaded', 'StatusReported'], 'new events are written under the new names')
  const rows = await checksums(current.platform.db as Kysely<any>)
  t.equal(rows.shipment_status_history!.split(':')[0], '10', 'the history has the uploads and the reports')

  // The same history as the code before the rename stored it, appended event by event in log order.
  const total = (await sql<{ n: number }>`select count(*)::int as n from es_events`.execute(current.platform.db)).rows[0]!.n
  const log = await readAllVisible(current.platform.store, () => true, total)
  t.equal(log.length, total)
  const old = await build(t)
  for (const e of log) {
    await old.platform.store.append(e.streamId, [{ id: e.id, type: OLD_NAME[e.type] ?? e.type, data: e.data, metadata: e.metadata, schemaVersion: e.schemaVersion }], e.streamVersion === 1 ? 'no_stream' : e.streamVersion - 1)
  }
  t.same(await storedTypes(old).then((types) => types.filter((x) => x in eventRenames || x in OLD_NAME)), ['CarrierStatusReported', 'ShipmentDocumented'],
    'the raw es_events.type column keeps the names the events were stored under')

  t.equal(await caughtUp(old), true)
  t.same(await checksums(old.platform.db as Kysely<any>), rows, 'projected live: the same rows in every shipment table')
  await rebuildReadModels({ database: old.platform.database, store: old.platform.store, batchSize: 7 })
  t.equal(await caughtUp(old), true)
  t.same(await checksums(old.platform.db as Kysely<any>), rows, 'rebuilt: the same rows in every shipment table')
  const historyTypes = await sql<{ event_type: string }>`select distinct event_type from read_model.shipment_status_history order by 1`.execute(old.platform.db)
  t.same(historyTypes.rows.map((r) => r.event_type), ['LabelUploaded', 'ShipmentCreated', 'ShipmentReady', 'StatusReported'])

  // The audit endpoint and the bus (the relay publishes what readAll returns) show the new names.
  for (const id of ids) {
    const res = await old.call('GET', `/api/v1/shipments/${id}/events`, { token })
    t.equal(res.statusCode, 200, res.body)
    const types: string[] = res.json().events.map((e: { type: string }) => e.type)
    t.ok(types.includes('LabelUploaded') && types.includes('StatusReported'), `shipment ${id}: ${types.join(', ')}`)
    t.notOk(types.some((x) => x in eventRenames), 'no old name')
  }
  const subjects = new Set((await readAllVisible(old.platform.store, () => true, total)).map(eventSubject))
  t.ok(subjects.has('events.shipment.LabelUploaded') && subjects.has('events.shipment.StatusReported'))
  t.notOk(subjects.has('events.shipment.ShipmentDocumented') || subjects.has('events.shipment.CarrierStatusReported'))

  // A read model projected before the rename: its history rows take the new names with the migration.
  const db = current.platform.db as Kysely<any>
  await sql`update read_model.shipment_status_history
    set event_type = case event_type when 'LabelUploaded' then 'ShipmentDocumented' when 'StatusReported' then 'CarrierStatusReported' else event_type end`.execute(db)
  t.not((await checksums(db)).shipment_status_history, rows.shipment_status_history)
  await statusHistoryNames.up(db.withSchema('read_model'))
  t.same(await checksums(db), rows, 'the migration gives the old rows the new names')
})
