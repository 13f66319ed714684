import { type Expression, type ExpressionBuilder, type Kysely } from 'kysely'
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres'
import type { Shipment } from '../../schemas/api/shipments.js'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import { toAddress } from '../addresses/address-view.js'
import { catalogEntry, type Overrides } from './status-catalog.js'
import type { LengthUnit, TemperatureUnit, WeightUnit } from '../shared/measures.js'
import { isoOrNull, json, numOrNull } from '../shared/rows.js'
import type { addressRow, packageRows, Row } from '../../projections/shipments/shipments-projection.js'
import { listingDays, listingPage, referenceTotal, type ListingFilters } from './listing-queries.js'
import { readPage, type ListingKey } from '../http/listing-seek.js'

/** Read-model queries of the routes API's shipments: one SQL statement per shipment view. */

type Eb = ExpressionBuilder<ReadModelDatabase & { s: ReadModelDatabase['shipments'] }, 's'>

const addressOf = (eb: Eb, column: 's.origin_address_id' | 's.destination_address_id') =>
  jsonObjectFrom(eb.selectFrom('addresses as a').selectAll('a').whereRef('a.id', '=', column))

const packagesOf = (eb: Eb) =>
  jsonArrayFrom(eb.selectFrom('shipment_packages as p').selectAll('p').whereRef('p.shipment_id', '=', 's.id').orderBy('p.position'))

/** The select that feeds `toShipment`: the row with its addresses and packages as JSON. */
export function shipmentViewQuery(db: Kysely<ReadModelDatabase>) {
  return db.selectFrom('shipments as s')
    .selectAll('s')
    .select((eb) => [
      addressOf(eb, 's.origin_address_id').as('origin'),
      addressOf(eb, 's.destination_address_id').as('destination'),
      packagesOf(eb).as('packages'),
    ])
}

export type ShipmentView = Awaited<ReturnType<ReturnType<typeof shipmentViewQuery>['executeTakeFirstOrThrow']>>

/** Visible to the shipper and the carrier of the shipment only (anyone else: not found). */
export const visibleTo = (orgId: string) => (eb: ExpressionBuilder<any, any>): Expression<any> =>
  eb.or([eb('s.shipper_id', '=', orgId), eb('s.carrier_id', '=', orgId)])

export async function findShipmentView(db: Kysely<ReadModelDatabase>, orgId: string, id: number): Promise<ShipmentView | undefined> {
  return shipmentViewQuery(db).where('s.id', '=', id).where(visibleTo(orgId)).executeTakeFirst()
}

/** The shipment view and the viewer's status catalog overrides in one round trip (the hot GET). */
export async function findShipmentViewWithCatalog(db: Kysely<ReadModelDatabase>, orgId: string, id: number): Promise<{ view: ShipmentView; overrides: Overrides } | undefined> {
  const row = await shipmentViewQuery(db)
    .select((eb) => jsonArrayFrom(eb.selectFrom('shipment_status_catalog as c').select(['c.code', 'c.name', 'c.color']).where('c.organization_id', '=', orgId)).as('catalog'))
    .where('s.id', '=', id).where(visibleTo(orgId)).executeTakeFirst()
  if (!row) return undefined
  const catalog = json<{ code: string; name: string | null; color: string | null }[]>(row.catalog)
  return { view: row, overrides: new Map(catalog.map((c) => [c.code, { name: c.name, color: c.color }])) }
}

export async function findShipmentRow(db: Kysely<ReadModelDatabase>, orgId: string, id: number) {
  return db.selectFrom('shipments as s').selectAll('s').where('s.id', '=', id).where(visibleTo(orgId)).executeTakeFirst()
}

export async function statusOverrides(db: Kysely<ReadModelDatabase>, orgId: string): Promise<Overrides> {
  const rows = await db.selectFrom('shipment_status_catalog').select(['code', 'name', 'color']).where('organization_id', '=', orgId).execute()
  return new Map(rows.map((r) => [r.code, { name: r.name, color: r.color }]))
}


type Json = Record<string, any>

/** The read model holds canonical units only: src/shared/package-input.ts normalizes every spelling on the way in. */
const measure = <U extends WeightUnit | LengthUnit | TemperatureUnit>(value: unknown, original: unknown, unit: unknown) =>
  ({ value: Number(value), original_value: numOrNull(original), unit: String(unit) as U })

function toPackage(p: Json): Shipment['packages'][number] {
  return {
    id: Number(p.id), label_code: p.label_code, external_reference: p.external_reference, description: p.description,
    weight: measure<WeightUnit>(p.grams, p.weight_original, p.weight_unit), grams: Number(p.grams),
    length: measure<LengthUnit>(p.length_cm, p.length_original, p.length_unit),
    width: measure<LengthUnit>(p.width_cm, p.width_original, p.width_unit),
    height: measure<LengthUnit>(p.height_cm, p.height_original, p.height_unit),
    temperature_min: p.temperature_min_c == null ? null : measure<TemperatureUnit>(p.temperature_min_c, p.temperature_min_original, p.temperature_min_unit),
    temperature_max: p.temperature_max_c == null ? null : measure<TemperatureUnit>(p.temperature_max_c, p.temperature_max_original, p.temperature_max_unit),
    is_flammable: p.is_flammable, is_corrosive: p.is_corrosive, is_fragile: p.is_fragile,
    classification: p.classification, un_code: p.un_code,
    declared_value_amount: Number(p.declared_value_amount), declared_value_currency: p.declared_value_currency,
  }
}


/** How a request states links: the public tracking link of a shipment (src/shipments/tracking-link.ts). */
export interface ShipmentLinks { tracking(ulid: string): string }

/**
 * The read-model view of one shipment as the projector's fold gives it: the columns of its row
 * (times as ISO strings) with its addresses and packages as the projector writes them.
 */
export type FoldedShipmentView = Row & {
  origin: ReturnType<typeof addressRow>
  destination: ReturnType<typeof addressRow>
  packages: ReturnType<typeof packageRows>
}

/** Read-model row (+ JSON parts) → the spec's Shipment, status names and colours from the viewer's catalog. */
export function toShipment(v: ShipmentView | FoldedShipmentView, overrides?: Overrides, links?: ShipmentLinks): Shipment {
  const status = catalogEntry(v.status, overrides)
  const sub = v.substatus ? catalogEntry(v.substatus, overrides) : null
  const packages = json<Json[]>(v.packages) ?? []
  return {
    id: Number(v.id), ulid: v.ulid, external_reference: v.external_reference, control_number: v.control_number,
    serviceType: v.service_type_id == null ? null : { id: Number(v.service_type_id), name: v.service_type_name ?? v.service_type_code ?? '' },
    shipper: { id: Number(v.shipper_internal_id), name: v.shipper_name, subdomain: v.shipper_subdomain },
    carrier: { id: Number(v.carrier_internal_id), name: v.carrier_name, subdomain: v.carrier_subdomain },
    status: { code: status.code, name: status.name, color: status.color, substatus: sub ? { code: sub.code, name: sub.name } : null },
    origin: toAddress(json<Json | null>(v.origin)),
    destination: toAddress(json<Json | null>(v.destination)),
    packages: packages.map(toPackage),
    totals: { total_packages: v.total_packages, total_grams: Number(v.total_grams), total_cm3: Number(v.total_cm3) },
    declared_value: Number(v.declared_value), declared_value_currency: v.declared_value_currency,
    is_public: v.is_public, public_tracking_url: v.is_public && links ? links.tracking(v.ulid) : null, requires_pickup: v.requires_pickup,
    related_shipment_id: numOrNull(v.related_shipment_id), related_type: v.related_type,
    merchant: json<{ name: string; code: string } | null>(v.merchant),
    tracking_number: v.tracking_number, tracking_url: v.tracking_url,
    finished_at: isoOrNull(v.finished_at), promised_delivery_at: isoOrNull(v.promised_delivery_at), label_printed_at: isoOrNull(v.label_printed_at),
    shipped_at: isoOrNull(v.shipped_at), delivered_at: isoOrNull(v.delivered_at),
    created_at: isoOrNull(v.created_at)!, updated_at: isoOrNull(v.updated_at)!,
  }
}

export type ShipmentFilters = ListingFilters

/**
 * A page of the organization's listing (issue 32): after the cursor's key, or for `page` through
 * the day counts (listing-seek.ts). `hasMore`: a row follows the page (one more is read to know).
 * `meta.total` is exact: the day counts summed, or a count over the reference's index.
 */
export async function listShipments(
  db: Kysely<ReadModelDatabase>, orgId: string, f: ShipmentFilters, perPage: number, page: number, after?: ListingKey,
) {
  // With external_reference (a few rows) an offset costs nothing; otherwise the day counts find the day.
  const { total, shown, hasMore, last } = await readPage({
    days: await listingDays(db, orgId, f), countTotal: () => referenceTotal(db, orgId, f), order: 'desc', page: { perPage, page }, after,
    read: (seek, limit) => listingPage(db, orgId, f, seek, limit),
  })
  const views = shown.length
    ? await shipmentViewQuery(db).where('s.id', 'in', shown.map((r) => r.id)).execute()
    : []
  const position = new Map(shown.map((r, i) => [r.id, i]))
  views.sort((a, b) => position.get(Number(a.id))! - position.get(Number(b.id))!)
  return { views, total, hasMore, last }
}
