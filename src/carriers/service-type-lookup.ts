import type { Platform } from '../platform.js'

export interface HubServiceType {
  id: number
  code: string
  name: string
  /** The hub carrier (`car_…`) offering it. */
  carrier_hub_id: string
  integration: 'custom' | 'service_routes'
}

/**
 * A service type of one of the carrier organization's hub carriers, by id or by code (for
 * `POST /shipments` with `service_type_id` / `service_type_code`). With `shipperOrgId` it must
 * also be available to that shipper: its own carriers, or a public certified one that is open
 * or under contract (the rule quotes follow). Undefined when nothing matches; a code offered by
 * several carriers of the organization resolves to the oldest service type.
 */
export async function resolveHubServiceType(
  platform: Platform, carrierOrgId: string, requested: { id: number | null; code: string | null }, shipperOrgId?: string,
): Promise<HubServiceType | undefined> {
  if (requested.id === null && requested.code === null) return undefined
  let q = platform.rm.selectFrom('service_types as s').innerJoin('carriers as c', 'c.id', 's.carrier_id')
    .select(['s.id', 's.code', 's.name', 'c.id as carrier_id', 'c.integration'])
    .where('c.organization_id', '=', carrierOrgId)
  if (requested.id !== null) q = q.where('s.id', '=', requested.id)
  if (requested.code !== null) q = q.where('s.code', '=', requested.code)
  if (shipperOrgId !== undefined && shipperOrgId !== carrierOrgId) {
    q = q.where((eb) => eb.and([
      eb('c.visibility', '=', 'public'),
      eb('c.certification_status', '=', 'certified'),
      eb.or([
        eb('c.access_mode', '=', 'open'),
        eb.exists(eb.selectFrom('contracts as k').select('k.id')
          .whereRef('k.carrier_id', '=', 'c.organization_id').where('k.shipper_id', '=', shipperOrgId).where('k.status', '=', 'active')),
      ]),
    ]))
  }
  const row = await q.orderBy('s.id').executeTakeFirst()
  return row && { id: Number(row.id), code: row.code, name: row.name, carrier_hub_id: row.carrier_id, integration: row.integration }
}
