import { PGlite } from '@electric-sql/pglite'
import { Kysely, sql } from 'kysely'
import { PGliteDialect } from 'kysely-pglite-dialect'
import type { DatabaseHandle } from '../../src/infrastructure/database/connection.js'
import type { Database } from '../../src/infrastructure/database/database.js'
import { buildApp } from '../../src/http/app.js'
import { modules } from '../../src/modules.js'
import { createPlatform } from '../../src/platform.js'
import { testApp, testConfig, type TestApp } from './build.js'
import { tasksWorld } from '../tasks/fixtures.js'
import { writeOrganizationLog } from '../bench/organization-log.js'
import { migrateInfrastructure } from '../../src/infrastructure/database/migrate.js'

/**
 * The embedded database as the platform kept it before issue 34 (`${DATA_DIR}/pglite`), opened
 * with PGlite and its Kysely dialect directly (not through src/, which no longer opens PGlite),
 * as a DatabaseHandle the platform accepts: one connection, LISTEN through the client.
 */
export async function openOldPglite(dir: string): Promise<DatabaseHandle & { client: PGlite }> {
  const client = new PGlite(dir)
  await client.waitReady
  const db = new Kysely<Database>({ dialect: new PGliteDialect(client) })
  return {
    client,
    // The platform's PGlite branches (no simple-query batches, in-process rate limits) while src/ still has them.
    kind: 'pglite' as unknown as DatabaseHandle['kind'],
    db,
    async listen(channel, onNotify) {
      const unlisten = await client.listen(channel, onNotify)
      return async () => { await unlisten() }
    },
    dedicated: () => db,
    requestReads: () => () => db,
    async close() {
      await db.destroy()
      if (!client.closed) await client.close()
    },
  }
}

export const address = (over: Record<string, unknown> = {}) => ({
  name: 'Ana Gómez', street: 'San Martín', street_number: '50', city: 'Rosario', state: 'Santa Fe', country: 'AR', ...over,
})

export interface OldInstallation {
  shipperToken: string
  carrierToken: string
  carrierId: string
  shipmentIds: number[]
  /** What the old platform answered for each shipment (GET /api/v1/shipments/{id}, the shipper's). */
  shipments: Map<number, unknown>
  /** GET /api/v1/tasks, the carrier's. */
  tasks: unknown
}

/**
 * Fills a new old-format PGlite folder through the API of the current platform: organizations, a
 * contract, a driver and places (tasksWorld), `shipments` shipments (every third marked ready,
 * every fifth cancelled) and a few tasks moved along; `seededOrganizations` more organizations
 * with places written straight into the log first (a larger log, quickly). Everything is closed
 * when it returns, the read models caught up.
 */
export async function oldInstallation(dir: string, opts: { shipments: number; seededOrganizations?: number }): Promise<OldInstallation> {
  const database = await openOldPglite(dir)
  if (opts.seededOrganizations) {
    await migrateInfrastructure(database.db)
    await writeOrganizationLog(database.db, opts.seededOrganizations)
    // The seeded organizations took internal ids 1…n themselves.
    await sql`select setval('organization_internal_id_seq', ${opts.seededOrganizations})`.execute(database.db)
  }
  const platform = await createPlatform({ ...testConfig(), rateLimitPerMinute: 0 }, { database })
  const app = await buildApp(platform, { logger: false, modules })
  try {
    const h: TestApp = testApp(app, platform)
    const w = await tasksWorld(h)
    const ok = (res: { statusCode: number; body: string }, code: number, what: string) => {
      if (res.statusCode !== code) throw new Error(`${what}: ${res.statusCode} ${res.body}`)
      return res
    }
    const shipmentIds: number[] = [w.shipment.id]
    for (let i = 0; i < opts.shipments; i++) {
      const res = ok(await h.call('POST', '/api/v1/shipments', {
        token: w.shipper.token,
        body: {
          carrier_id: w.carrier.id, origin: address({ city: 'Córdoba', state: 'Córdoba' }), destination: address({ name: `R${i}` }),
          packages: [{ grams: 100 + i, length: 10, width: 20, height: 30 }],
        },
      }), 201, 'shipment')
      const id = (res as any).json().shipment.id as number
      shipmentIds.push(id)
      if (i % 3 === 0) ok(await h.call('POST', `/api/v1/shipments/${id}/ready`, { token: w.shipper.token }), 200, 'ready')
      if (i % 5 === 0) ok(await h.call('POST', `/api/v1/shipments/${id}/cancel`, { token: w.carrier.token }), 200, 'cancel')
    }
    const a = await w.task({ shipment_id: w.shipment.id, assignee_id: w.driver.id })
    const b = await w.task({ address: { place_id: w.place.id }, dependencies: [a.ulid] })
    ok(await w.transition(a.ulid, 'complete', { signed_by: 'Ana', barcode: 'PKG-A' }), 200, 'complete')
    ok(await w.transition(b.ulid, 'start'), 200, 'start')
    if (!await platform.projections.waitFor(await platform.store.headPosition(), 120_000)) throw new Error('the old projections did not catch up')
    const shipments = new Map<number, unknown>()
    for (const id of shipmentIds) shipments.set(id, (await h.call('GET', `/api/v1/shipments/${id}`, { token: w.shipper.token })).json())
    return {
      shipperToken: w.shipper.token, carrierToken: w.carrier.token, carrierId: w.carrier.id, shipmentIds, shipments,
      tasks: (await h.call('GET', '/api/v1/tasks', { token: w.carrier.token })).json(),
    }
  } finally {
    await app.close()
    await platform.close()
    await database.close()
  }
}
