import type { OrganizationRow } from '../http/plugins/auth.js'
import type { Platform } from '../platform.js'
import { ErrorBag } from '../shared/errors.js'

/** A service type a caller may be quoted, with what is needed to price it. */
export interface OfferedServiceType {
  id: number
  code: string
  name: string
  carrier: { id: string; organization_id: string; quote_mode: 'tariff' | 'api'; quote_url: string | null }
}

/**
 * The service types the caller can be quoted for the counterpart of the request. A shipper names
 * the carrier (`carrier_id`: an organization `org_…` for all its carriers, or one hub carrier
 * `car_…`); a carrier names the shipper (`shipper_id`) and is quoted its own carriers.
 */
export async function offeredServiceTypes(
  platform: Platform, caller: OrganizationRow, body: { carrier_id?: string | null | undefined; shipper_id?: string | null | undefined },
): Promise<OfferedServiceType[]> {
  const bag = new ErrorBag()
  const isShipper = caller.roles.includes('shipper')
  const isCarrier = caller.roles.includes('carrier')
  const carrierId = body.carrier_id ?? null
  const shipperId = body.shipper_id ?? null
  let q = platform.rm.selectFrom('service_types as s').innerJoin('carriers as c', 'c.id', 's.carrier_id')
    .select(['s.id', 's.code', 's.name', 'c.id as carrier_id', 'c.organization_id', 'c.quote_mode', 'c.quote_url'])
  if (carrierId !== null && isShipper) {
    const known = carrierId.startsWith('car_')
      ? await platform.rm.selectFrom('carriers').select('id').where('id', '=', carrierId).executeTakeFirst()
      : await platform.rm.selectFrom('organizations').select('id').where('id', '=', carrierId).executeTakeFirst()
    if (!known) bag.add('carrier_id', 'The selected carrier_id is invalid.')
    q = carrierId.startsWith('car_') ? q.where('c.id', '=', carrierId) : q.where('c.organization_id', '=', carrierId)
    // Its own carriers always; another organization's only when public, certified and either open
    // to all or under an active contract with the caller (DESIGN §3.5).
    q = q.where((eb) => eb.or([
      eb('c.organization_id', '=', caller.id),
      eb.and([
        eb('c.visibility', '=', 'public'),
        eb('c.certification_status', '=', 'certified'),
        eb.or([
          eb('c.access_mode', '=', 'open'),
          eb.exists(eb.selectFrom('contracts as k').select('k.id')
            .whereRef('k.carrier_id', '=', 'c.organization_id').where('k.shipper_id', '=', caller.id).where('k.status', '=', 'active')),
        ]),
      ]),
    ]))
  } else if (shipperId !== null && isCarrier) {
    const known = await platform.rm.selectFrom('organizations').select('id').where('id', '=', shipperId).executeTakeFirst()
    if (!known) bag.add('shipper_id', 'The selected shipper_id is invalid.')
    q = q.where('c.organization_id', '=', caller.id)
  } else {
    if (isShipper) bag.add('carrier_id', 'The carrier id field is required when the caller is a shipper.')
    if (isCarrier) bag.add('shipper_id', 'The shipper id field is required when the caller is a carrier.')
  }
  bag.throwIfAny()
  const rows = await q.orderBy('s.id').execute()
  return rows.map((r) => ({
    id: Number(r.id), code: r.code, name: r.name,
    carrier: { id: r.carrier_id, organization_id: r.organization_id, quote_mode: r.quote_mode, quote_url: r.quote_url },
  }))
}

/** One service type by id, with its carrier (pricing a shipment created with `service_type_id`). */
export async function serviceTypeById(platform: Platform, id: number): Promise<OfferedServiceType | undefined> {
  const r = await platform.rm.selectFrom('service_types as s').innerJoin('carriers as c', 'c.id', 's.carrier_id')
    .select(['s.id', 's.code', 's.name', 'c.id as carrier_id', 'c.organization_id', 'c.quote_mode', 'c.quote_url'])
    .where('s.id', '=', id).executeTakeFirst()
  return r && { id: Number(r.id), code: r.code, name: r.name, carrier: { id: r.carrier_id, organization_id: r.organization_id, quote_mode: r.quote_mode, quote_url: r.quote_url } }
}
