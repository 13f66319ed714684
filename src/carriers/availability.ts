import type { ExpressionBuilder } from 'kysely'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import type { OrganizationRow } from '../http/plugins/auth.js'
import type { Platform } from '../platform.js'
import { ErrorBag } from '../shared/errors.js'

/**
 * Which service types a caller may use, for quotes and for shipments (DESIGN §3.5): the one place
 * the caller-side rule (a shipper names the carrier, a carrier names the shipper) and the
 * availability rule (its own carriers, or another organization's public, certified carrier that is
 * open to all or under an active contract) are written.
 */

type WithCarrier = ReadModelDatabase & { c: ReadModelDatabase['carriers'] }

/** Another organization's carrier `c` is available to this shipper: public, certified, and open or under contract. */
const openToShipper = (shipperOrgId: string) => (eb: ExpressionBuilder<WithCarrier, 'c'>) => eb.and([
  eb('c.visibility', '=', 'public'),
  eb('c.certification_status', '=', 'certified'),
  eb.or([
    eb('c.access_mode', '=', 'open'),
    eb.exists(eb.selectFrom('contracts as k').select('k.id')
      .whereRef('k.carrier_id', '=', 'c.organization_id').where('k.shipper_id', '=', shipperOrgId).where('k.status', '=', 'active')),
  ]),
])

/** The caller named no counterpart: 422 on the field each of its roles must send. */
export function addMissingCounterpart(roles: readonly string[], bag: ErrorBag): void {
  if (roles.includes('shipper')) bag.add('carrier_id', 'The carrier id field is required when the caller is a shipper.')
  if (roles.includes('carrier')) bag.add('shipper_id', 'The shipper id field is required when the caller is a carrier.')
}

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
    q = q.where((eb) => eb.or([eb('c.organization_id', '=', caller.id), openToShipper(caller.id)(eb)]))
  } else if (shipperId !== null && isCarrier) {
    const known = await platform.rm.selectFrom('organizations').select('id').where('id', '=', shipperId).executeTakeFirst()
    if (!known) bag.add('shipper_id', 'The selected shipper_id is invalid.')
    q = q.where('c.organization_id', '=', caller.id)
  } else {
    addMissingCounterpart(caller.roles, bag)
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
 * also be available to that shipper (the rule quotes follow). Undefined when nothing matches; a
 * code offered by several carriers of the organization resolves to the oldest service type.
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
  // Its own carriers need no check: they all belong to carrierOrgId.
  if (shipperOrgId !== undefined && shipperOrgId !== carrierOrgId) q = q.where(openToShipper(shipperOrgId))
  const row = await q.orderBy('s.id').executeTakeFirst()
  return row && { id: Number(row.id), code: row.code, name: row.name, carrier_hub_id: row.carrier_id, integration: row.integration }
}
