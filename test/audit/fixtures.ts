import { type Kysely, sql } from 'kysely'
import type { Test } from 'tap'
import { Notary, type NotaryOptions } from '../../src/audit/notary.js'
import { latestHead } from '../../src/audit/tree-store.js'
import { readingThrough } from '../../src/infrastructure/event-store/read-through.js'
import type { TestApp } from '../helpers/build.js'
import { multipart } from '../carriers/fixtures/multipart.js'

const address = { name: 'Ana', street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR' }

export const dbOf = (h: TestApp) => h.platform.db as Kysely<any>

/** A notary on the app's database, signing often; stopped at teardown. */
export function startTestNotary(t: Test, h: TestApp, opts: NotaryOptions = {}): Notary {
  const db = h.platform.database.dedicated('notary', 2)
  const notary = new Notary(db, readingThrough(h.platform.store, db, { asStored: true }), h.platform.notaryKey, { signIntervalMs: 100, pollMs: 100, ...opts })
  notary.start()
  t.teardown(() => notary.stop())
  return notary
}

export const eventCount = async (h: TestApp): Promise<number> =>
  (await sql<{ n: number }>`select count(*)::int as n from es_events`.execute(dbOf(h))).rows[0]!.n

/** Until a signed head covers every event of the log (other tests' transactions may hold readers back a while). */
export async function sealedToTheEnd(h: TestApp, timeoutMs = 20_000): Promise<number> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const [n, head] = await Promise.all([eventCount(h), latestHead(dbOf(h))])
    if (head && head.treeSize === n) return n
    if (Date.now() > end) throw new Error(`the notary did not seal the log: ${n} events, head ${head?.treeSize ?? 'none'}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

/**
 * A shipment of a custom carrier taken to delivered through the API: created, label uploaded,
 * ready, received, delivered. Its events: ShipmentCreated, LabelUploaded, ShipmentReady,
 * StatusReported ×2 (and their control-number reservation in another stream).
 */
export async function deliveredShipment(t: Test, h: TestApp, org?: { id: string; token: string }) {
  const owner = org ?? await h.createOrganization({ roles: ['carrier', 'shipper'], carriers_enabled: true })
  const created = await h.call('POST', '/api/v1/carriers', {
    token: owner.token, body: { name: `Hub ${Math.random().toString(36).slice(2, 6)}`, integration: 'custom', visibility: 'private', service_types: [{ code: 'express', name: 'Express' }] },
  })
  t.equal(created.statusCode, 201, created.body)
  const key = created.json().api_key as string
  const res = await h.call('POST', '/api/v1/shipments', {
    token: owner.token, body: { carrier_id: owner.id, service_type_code: 'express', origin: address, destination: { ...address, name: 'Bea' }, packages: [{ grams: 700, length: 10, width: 10, height: 10 }] },
  })
  t.equal(res.statusCode, 201, res.body)
  const id = res.json().shipment.id as number
  const m = multipart({ label: Buffer.from('%PDF-1.4 label') })
  const upload = await h.app.inject({ method: 'POST', url: `/carrier/v1/shipments/${id}/documents`, headers: { authorization: `Bearer ${key}`, ...m.headers }, payload: m.payload })
  t.equal(upload.statusCode, 200, upload.body)
  t.equal((await h.call('POST', `/api/v1/shipments/${id}/ready`, { token: owner.token })).statusCode, 200)
  for (const status of ['received', 'delivered']) {
    const r = await h.call('POST', `/carrier/v1/shipments/${id}/status`, { token: key, body: { status } })
    t.equal(r.statusCode, 200, r.body)
  }
  return { id, token: owner.token, org: owner, carrierKey: key, stream: `shipment-${id}` }
}
