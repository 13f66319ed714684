import type { Carrier, ServiceType } from '../../schemas/api/carriers.js'
import type { CarriersTable } from '../../projections/carriers/tables.js'
import type { Kysely } from 'kysely'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import { NotFoundError } from '../shared/errors.js'
import { iso } from '../shared/rows.js'

type CarrierRow = Omit<CarriersTable, 'created_at' | 'updated_at'> & { created_at: Date; updated_at: Date }


export function toCarrier(row: CarrierRow, serviceTypes: ServiceType[]): Carrier {
  return {
    id: row.id, name: row.name, integration: row.integration, visibility: row.visibility, access_mode: row.access_mode,
    certification_status: row.certification_status as Carrier['certification_status'],
    notification_url: row.notification_url, quote_url: row.quote_url, quote_mode: row.quote_mode,
    service_types: serviceTypes, organization_id: row.organization_id,
    created_at: iso(row.created_at), updated_at: iso(row.updated_at),
  }
}

export const findCarrierRow = (db: Kysely<ReadModelDatabase>, id: string) =>
  db.selectFrom('carriers').selectAll().where('id', '=', id).executeTakeFirst()

export async function serviceTypesOf(db: Kysely<ReadModelDatabase>, carrierIds: string[]): Promise<Map<string, ServiceType[]>> {
  const out = new Map<string, ServiceType[]>(carrierIds.map((id) => [id, []]))
  if (carrierIds.length === 0) return out
  const rows = await db.selectFrom('service_types').select(['id', 'carrier_id', 'code', 'name'])
    .where('carrier_id', 'in', carrierIds).orderBy('id').execute()
  for (const r of rows) out.get(r.carrier_id)?.push({ id: Number(r.id), code: r.code, name: r.name })
  return out
}

export async function carrierView(db: Kysely<ReadModelDatabase>, id: string): Promise<Carrier> {
  const row = await findCarrierRow(db, id)
  if (!row) throw new NotFoundError('Carrier')
  return toCarrier(row, (await serviceTypesOf(db, [id])).get(id) ?? [])
}

/** A carrier of this organization, or 404 (another tenant's carrier is never revealed). */
export async function ownedCarrier(db: Kysely<ReadModelDatabase>, organizationId: string, id: string) {
  const row = await findCarrierRow(db, id)
  if (!row || row.organization_id !== organizationId) throw new NotFoundError('Carrier')
  return row
}

export async function listCarriers(db: Kysely<ReadModelDatabase>, organizationId: string): Promise<Carrier[]> {
  const rows = await db.selectFrom('carriers').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute()
  const types = await serviceTypesOf(db, rows.map((r) => r.id))
  return rows.map((r) => toCarrier(r, types.get(r.id) ?? []))
}
