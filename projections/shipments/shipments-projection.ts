import { type CompiledQuery, type Kysely, type RawBuilder, type Selectable, sql } from 'kysely'
import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { addressPrecision } from '../../src/infrastructure/geo/precision.js'
import { ShipmentEvents, type AddressSnapshot, type ShipmentCreated } from '../../schemas/events/shipments.js'
import { StatusCatalogEvents } from '../../schemas/events/shipment-statuses.js'
import { defineProjection, type Projection, type RecordedOf } from '../projection.js'
import type { ReadModelDatabase } from '../read-model-database.js'
import { idOf } from '../../schemas/events/streams.js'
import { iso, isoOrNull, json, num, numOrNull } from '../../src/shared/rows.js'
import type { ShipmentsTable } from './tables.js'
import { listedFieldsOf, listingChanges, type ListedFields } from './listings.js'

/**
 * shipments, shipment_packages, addresses, shipment_status_history, shipment_attachments and
 * shipment_status_catalog. Batch-friendly (rebuild speed): the batch's events are folded per
 * shipment in memory over the rows it already had (one SELECT), then written back with one
 * multi-row upsert per table. Every event that changes a shipment row gives it the next
 * `change_seq` (max + 1, …, in log order): the projector is the single writer and batches commit
 * in order, so the numbers follow commit order (the carrier API's `updated_since` + cursor feed),
 * and they do not depend on batch boundaries (a rebuild gives the same numbers). With it goes
 * `feed_watermark`, the latest `updated_at` of any change up to that number: `updated_at` is the
 * command's clock and does not follow commit order, the watermark does, so the feed finds where
 * `updated_since` starts by one index seek (src/carriers/carrier-shipments.ts).
 */

/** Change-notice topics: shipments whose row changed (ids), organizations whose status catalog changed. */
export const SHIPMENT_ROWS = 'shipments'
export const STATUS_CATALOGS = 'shipment_status_catalog'

export interface Row {
  id: number; ulid: string; external_reference: string | null; control_number: string
  service_type_id: number | null; service_type_code: string | null; service_type_name: string | null
  carrier_hub_id: string | null; integration: 'custom' | 'service_routes'
  shipper_id: string; shipper_internal_id: number; shipper_name: string; shipper_subdomain: string
  carrier_id: string; carrier_internal_id: number; carrier_name: string; carrier_subdomain: string
  status: string; substatus: string | null; carrier_phase: string; carrier_status: string | null
  in_return: boolean; final_status: string | null
  origin_address_id: string; destination_address_id: string
  total_packages: number; total_grams: number; total_cm3: number
  declared_value: number; declared_value_currency: string | null; is_public: boolean; requires_pickup: boolean
  merchant: unknown; related_shipment_id: number | null; related_type: string | null; custom_data: unknown; documents: unknown
  tracking_number: string | null; tracking_url: string | null
  promised_delivery_at: string | null; documented_at: string | null; ready_at: string | null; label_printed_at: string | null
  shipped_at: string | null; delivered_at: string | null; finished_at: string | null; cancelled_at: string | null; expired_at: string | null
  created_at: string; updated_at: string; stream_version: number; change_seq: number; feed_watermark: string
}

const shipmentIdOf = (e: RecordedEvent): number => idOf.shipment(e.streamId)!

function fromDb(r: Selectable<ShipmentsTable>): Row {
  return {
    ...r,
    id: num(r.id), service_type_id: numOrNull(r.service_type_id), shipper_internal_id: num(r.shipper_internal_id),
    carrier_internal_id: num(r.carrier_internal_id), total_grams: num(r.total_grams), total_cm3: num(r.total_cm3),
    related_shipment_id: numOrNull(r.related_shipment_id), change_seq: num(r.change_seq),
    promised_delivery_at: isoOrNull(r.promised_delivery_at), documented_at: isoOrNull(r.documented_at), ready_at: isoOrNull(r.ready_at),
    label_printed_at: isoOrNull(r.label_printed_at), shipped_at: isoOrNull(r.shipped_at), delivered_at: isoOrNull(r.delivered_at),
    finished_at: isoOrNull(r.finished_at), cancelled_at: isoOrNull(r.cancelled_at), expired_at: isoOrNull(r.expired_at),
    created_at: iso(r.created_at), updated_at: iso(r.updated_at), feed_watermark: iso(r.feed_watermark),
    merchant: json(r.merchant), custom_data: json(r.custom_data), documents: json(r.documents),
  }
}

function rowOfCreated(d: ShipmentCreated, version: number): Row {
  const phase = d.integration === 'service_routes' ? 'pending_preparation' : 'processing'
  let grams = 0; let cm3 = 0
  for (const p of d.packages) { grams += p.weight.value; cm3 += p.length.value * p.width.value * p.height.value }
  return {
    id: d.id, ulid: d.ulid, external_reference: d.external_reference, control_number: d.control_number,
    service_type_id: d.service_type?.id ?? null, service_type_code: d.service_type?.code ?? null,
    service_type_name: d.service_type?.name ?? null, carrier_hub_id: d.service_type?.carrier_hub_id ?? null,
    integration: d.integration,
    shipper_id: d.shipper.id, shipper_internal_id: d.shipper.internal_id, shipper_name: d.shipper.name, shipper_subdomain: d.shipper.subdomain,
    carrier_id: d.carrier.id, carrier_internal_id: d.carrier.internal_id, carrier_name: d.carrier.name, carrier_subdomain: d.carrier.subdomain,
    status: 'pending', substatus: phase, carrier_phase: phase, carrier_status: null, in_return: false, final_status: null,
    origin_address_id: d.origin.id, destination_address_id: d.destination.id,
    total_packages: d.packages.length, total_grams: grams, total_cm3: cm3,
    declared_value: d.declared_value, declared_value_currency: d.declared_value_currency, is_public: d.is_public,
    requires_pickup: d.requires_pickup, merchant: d.merchant, related_shipment_id: d.related_shipment_id, related_type: d.related_type,
    custom_data: d.custom_data, documents: null, tracking_number: null, tracking_url: null,
    promised_delivery_at: d.promised_delivery_at, documented_at: d.integration === 'service_routes' ? d.created_at : null,
    ready_at: null, label_printed_at: null, shipped_at: null, delivered_at: null, finished_at: null, cancelled_at: null, expired_at: null,
    created_at: d.created_at, updated_at: d.created_at, stream_version: version, change_seq: 0, feed_watermark: d.created_at,
  }
}

export const addressRow = (a: AddressSnapshot, createdAt: string) => ({
  id: a.id, organization_id: a.organization_id, place_id: a.place_id, name: a.name, street: a.street, street_number: a.street_number,
  floor: a.floor, apartment: a.apartment, reference: a.reference, zipcode: a.zipcode, phone: a.phone, email: a.email,
  document_type: a.document_type, document_number: a.document_number,
  city_id: a.city?.id ?? null, city_name: a.city?.name ?? null,
  state_id: a.state?.id ?? null, state_code: a.state?.code ?? null, state_name: a.state?.name ?? null,
  country_id: a.country?.id ?? null, country_iso: a.country?.iso ?? null, country_name: a.country?.name ?? null,
  geo_latitude: a.geo_latitude, geo_longitude: a.geo_longitude, geo_precision: addressPrecision(a), created_at: createdAt,
})

export function packageRows(d: ShipmentCreated) {
  return d.packages.map((p, i) => ({
    shipment_id: d.id, id: p.id, position: i, ulid: p.ulid, shipper_id: d.shipper.id, carrier_id: d.carrier.id, reused: p.reused,
    label_code: p.label_code, external_reference: p.external_reference, description: p.description,
    grams: p.weight.value, weight_original: p.weight.original_value, weight_unit: p.weight.unit,
    length_cm: p.length.value, length_original: p.length.original_value, length_unit: p.length.unit,
    width_cm: p.width.value, width_original: p.width.original_value, width_unit: p.width.unit,
    height_cm: p.height.value, height_original: p.height.original_value, height_unit: p.height.unit,
    temperature_min_c: p.temperature_min?.value ?? null, temperature_min_original: p.temperature_min?.original_value ?? null,
    temperature_min_unit: p.temperature_min?.unit ?? null,
    temperature_max_c: p.temperature_max?.value ?? null, temperature_max_original: p.temperature_max?.original_value ?? null,
    temperature_max_unit: p.temperature_max?.unit ?? null,
    is_flammable: p.is_flammable, is_corrosive: p.is_corrosive, is_fragile: p.is_fragile,
    classification: p.classification, un_code: p.un_code,
    declared_value_amount: p.declared_value_amount, declared_value_currency: p.declared_value_currency, created_at: d.created_at,
  }))
}

const sourceOf = (e: RecordedEvent): string => {
  const kind = e.metadata.actor?.kind
  return kind === 'carrier' ? 'carrier_api' : kind === 'organization' || kind === 'user' ? 'routes_api' : 'system'
}

type History = ReadModelDatabase['shipment_status_history'] extends infer T ? { [K in keyof T]: unknown } : never


/**
 * The pure part of the projection: folds events over the rows the shipments already had.
 * Also used by `GET /shipments/{id}?as_of=` to rebuild a past view from the stream alone.
 */
export function foldShipmentEvents(events: readonly RecordedEvent[], existing: Map<number, Row> = new Map(), lastChangeSeq = 0) {
  const rows = existing
  let seq = lastChangeSeq
  // The batch's own watermark; the statement raises it to the table's (the fold starts from none).
  let high = -Infinity
  const stamp = (r: Row) => {
    r.change_seq = ++seq
    high = Math.max(high, Date.parse(r.updated_at))
    r.feed_watermark = new Date(high).toISOString()
  }
  const changed = new Set<number>()
  const addresses: ReturnType<typeof addressRow>[] = []
  const packages: ReturnType<typeof packageRows> = []
  const history: History[] = []
  const attachments: Record<string, unknown>[] = []
  const catalog = new Map<string, Record<string, unknown>>()

  // A stream read whole (`?as_of=`) may hold events of other types: they fall to `default` and change nothing.
  for (const e of events as readonly Recorded[]) {
    if (e.type === 'ShipmentStatusCustomized') {
      const d = e.data
      catalog.set(`${d.organization_id}\u0000${d.code}`, { organization_id: d.organization_id, code: d.code, name: d.name, color: d.color, updated_at: d.customized_at })
      continue
    }
    if (idOf.shipment(e.streamId) === null) continue
    const id = shipmentIdOf(e)
    const at = e.metadata.occurred_at
    const hist = (r: Row, extra: Partial<History> = {}, occurredAt = at) => history.push({
      shipment_id: id, stream_version: e.streamVersion, event_type: e.type, status: r.status, substatus: r.substatus,
      carrier_status: null, reason: null, message: null, source: sourceOf(e), signed_by: null, occurred_at: occurredAt, recorded_at: at, ...extra,
    })
    if (e.type === 'ShipmentCreated') {
      const d = e.data
      const r = rowOfCreated(d, e.streamVersion)
      stamp(r)
      rows.set(id, r)
      changed.add(id)
      for (const a of [d.origin, d.destination]) if (a.created) addresses.push(addressRow(a, d.created_at))
      packages.push(...packageRows(d))
      hist(r, {}, d.created_at)
      continue
    }
    const r = rows.get(id)
    if (!r) continue // an event of a shipment this read model never saw created: skip, never throw
    r.stream_version = Math.max(r.stream_version, e.streamVersion)
    let rowChanged = true
    switch (e.type) {
      case 'LabelUploaded': {
        const d = e.data
        r.documents = { label: d.label, label_zpl: d.label_zpl, waybill: d.waybill }
        r.documented_at = d.documented_at
        if (r.carrier_phase === 'processing') {
          r.carrier_phase = 'pending_preparation'
          if (!r.final_status) { r.substatus = 'pending_preparation'; hist(r, {}, d.documented_at) }
        }
        break
      }
      case 'ShipmentReady': {
        const d = e.data
        r.carrier_phase = 'ready_to_ship'
        r.ready_at = d.ready_at
        r.substatus = 'ready_to_ship'
        hist(r, {}, d.ready_at)
        break
      }
      case 'StatusReported': {
        const d = e.data
        r.carrier_phase = 'in_carrier_hands'
        r.carrier_status = d.status
        r.status = d.routes_status
        r.substatus = d.substatus
        r.in_return = d.in_return
        r.shipped_at ??= d.occurred_at
        if (d.status === 'delivered') r.delivered_at = d.occurred_at
        if (d.final) { r.final_status = d.status; r.finished_at = d.occurred_at }
        // A status the routes operations set says so, whoever's command carried it (src/shipments/routes-status.ts).
        const by = d.source === 'routes' ? { source: 'routes', signed_by: d.signed_by ?? null } : {}
        hist(r, { carrier_status: d.status, reason: d.reason, message: d.message, ...by }, d.occurred_at)
        break
      }
      case 'ShipmentCancelled': {
        const d = e.data
        r.status = 'cancelled'; r.substatus = null; r.final_status = 'cancelled'
        r.cancelled_at = d.cancelled_at; r.finished_at = d.cancelled_at
        hist(r, { message: d.reason }, d.cancelled_at)
        break
      }
      case 'ShipmentExpired': {
        const d = e.data
        r.status = 'cancelled'; r.substatus = 'expired'; r.final_status = 'expired'
        r.expired_at = d.expired_at; r.finished_at = d.expired_at
        hist(r, {}, d.expired_at)
        break
      }
      case 'TrackingNumberSet': {
        const d = e.data
        r.tracking_number = d.tracking_number
        r.tracking_url = d.tracking_url
        break
      }
      case 'LabelPrinted': {
        const d = e.data
        if (r.label_printed_at) rowChanged = false
        else r.label_printed_at = d.printed_at
        break
      }
      case 'AttachmentAdded': {
        const d = e.data
        attachments.push({
          id: d.id, shipment_id: id, filename: d.filename, content_type: d.blob.content_type, size: d.blob.size,
          sha256: d.blob.sha256, blob_key: d.blob.key, description: d.description, uploaded_by: d.uploaded_by, uploaded_at: d.uploaded_at,
        })
        rowChanged = false
        break
      }
      default:
        rowChanged = false
    }
    if (rowChanged) { r.updated_at = at; stamp(r); changed.add(id) }
  }

  return { rows, changed, addresses, packages, history, attachments, catalog }
}

/** What the projection reads: a shipment stream's events and the organizations' status catalogs. */
const ShipmentsEvents = { ...ShipmentEvents, ...StatusCatalogEvents }
type Recorded = RecordedOf<typeof ShipmentsEvents>

export const shipmentsProjection: Projection = defineProjection({
  name: 'shipments',
  events: ShipmentsEvents,
  async apply(db, events, ctx) {
    for (const q of await shipmentsProjection.statements!(db, events, ctx)) await db.executeQuery(q)
  },
  async statements(db, events, ctx): Promise<CompiledQuery[]> {
    const existing = new Map<number, Row>()
    const needed = new Set<number>()
    const createdHere = new Set<number>()
    for (const e of events) {
      if (idOf.shipment(e.streamId) === null) continue
      const id = shipmentIdOf(e)
      if (e.type === 'ShipmentCreated') createdHere.add(id)
      else if (!createdHere.has(id)) needed.add(id)
    }
    if (needed.size) {
      const found = await db.selectFrom('shipments').selectAll().where('id', '=', sql<number>`any(${[...needed]}::bigint[])`).execute()
      for (const r of found) existing.set(Number(r.id), fromDb(r))
    }
    // The fold changes the rows in place: what the listings held before is taken first.
    const before = new Map<number, ListedFields>([...existing].map(([id, r]) => [id, listedFieldsOf(r)]))

    // One number per row-changing event, in log order, continuing from the last one given (the
    // fold counts from 0; the statement adds the table's max): the same numbers whatever the batch
    // boundaries, so a rebuild reproduces them exactly.
    const { rows, changed, addresses, packages, history, attachments, catalog } = foldShipmentEvents(events, existing, 0)
    const schema = ctx.schema
    const parts: Part[] = []
    if (changed.size) {
      const out = [...changed].map((id) => rows.get(id)!)
      const columns = Object.keys(out[0]!)
      parts.push(upsertPart(schema, 'shipments', out, ['id'], columns.filter((k) => k !== 'id'), columns, { seq: 'change_seq', watermark: 'feed_watermark' }))
    }
    const listed = listingChanges(before, [...changed].map((id) => rows.get(id)!))
    if (listed.listings.length) {
      parts.push(upsertPart(schema, 'shipment_listings', listed.listings, ['org_id', 'shipment_id'], ['status', 'created_at', 'external_reference']))
    }
    if (listed.counts.length) parts.push(countsPart(schema, listed.counts))
    if (addresses.length) parts.push(upsertPart(schema, 'addresses', addresses, ['id'], null))
    if (packages.length) parts.push(upsertPart(schema, 'shipment_packages', packages, ['shipment_id', 'id'], null))
    if (history.length) parts.push(upsertPart(schema, 'shipment_status_history', history, ['shipment_id', 'stream_version'], null))
    if (attachments.length) parts.push(upsertPart(schema, 'shipment_attachments', attachments, ['id'], null))
    if (catalog.size) parts.push(upsertPart(schema, 'shipment_status_catalog', [...catalog.values()], ['organization_id', 'code'], ['name', 'color', 'updated_at']))
    if (!parts.length) return []
    // Whoever keeps copies of shipment views hears of these (one notice per round, from the runner).
    // Rows stay a function of the events: the notice only expires copies.
    ctx.changed(SHIPMENT_ROWS, changed)
    ctx.changed(STATUS_CATALOGS, new Set([...catalog.values()].map((c) => String(c.organization_id))))
    // Every table of the batch in one statement (data-modifying CTEs): one round trip per batch.
    const ctes = parts.map((q, i) => sql`${sql.id(`w${i}`)} as (${q} returning 1)`)
    const out = [sql`with ${sql.join(ctes)} select 1`.compile(db)]
    // A count that fell to zero goes (a separate statement: the CTEs share one snapshot), so the
    // table does not depend on how the log was cut into batches (rebuild: the same rows).
    if (listed.lowered.length) out.push(dropZeroCounts(schema, listed.lowered).compile(db))
    return out
  },
})

type Part = ReturnType<typeof sql>

const countsTable = (schema: string) => sql.raw(`${quoted(schema)}.${quoted('shipment_listing_counts')}`)

/** Adds each delta to its (organization, status, day) count. */
function countsPart(schema: string, deltas: readonly object[]): Part {
  const t = countsTable(schema)
  return sql`insert into ${t} as c (org_id, status, day, n)
    select r.org_id, r.status, r.day, r.n from json_populate_recordset(null::${t}, ${JSON.stringify(deltas)}::json) as r
    on conflict (org_id, status, day) do update set n = c.n + excluded.n`
}

function dropZeroCounts(schema: string, keys: readonly object[]) {
  const t = countsTable(schema)
  return sql`delete from ${t} as c using json_populate_recordset(null::${t}, ${JSON.stringify(keys)}::json) as r
    where c.org_id = r.org_id and c.status = r.status and c.day = r.day and c.n = 0`
}

/**
 * The rows travel as one JSON parameter and `json_populate_recordset` shapes them as the table's
 * row type (columns the objects lack are null), instead of thousands of bind parameters. The
 * table is named with the projection's schema, so `rebuild` writes its fresh copy. `feed.seq`
 * gets the table's current maximum added (the change feed numbering) and `feed.watermark` is
 * raised to the one of the table's last change.
 */
function upsertPart(
  schema: string, table: string, rows: readonly object[], conflict: string[], update: string[] | null,
  columns?: string[], feed?: FeedColumns,
): Part {
  const key = JSON.stringify([schema, table, conflict, update, columns, feed])
  let shape = upsertShapes.get(key)
  if (!shape) {
    // Each rebuild writes into a schema of its own: keep the cache from growing with them.
    if (upsertShapes.size >= 64) upsertShapes.clear()
    upsertShapes.set(key, (shape = upsertShape(schema, table, conflict, update, columns, feed)))
  }
  return sql`${shape.head}${JSON.stringify(rows)}::json) as r${shape.tail}`
}

/**
 * The text of an upsert around its one JSON parameter, built once per table and column list: built
 * from fragments on every round, it cost the projector more than the rows' own JSON.
 */
const upsertShapes = new Map<string, { head: RawBuilder<unknown>; tail: RawBuilder<unknown> }>()

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`

interface FeedColumns { seq: string; watermark: string }

function upsertShape(
  schema: string, table: string, conflict: string[], update: string[] | null, columns?: string[], feed?: FeedColumns,
): { head: RawBuilder<unknown>; tail: RawBuilder<unknown> } {
  const target = `${quoted(schema)}.${quoted(table)}`
  const column = (c: string) => {
    if (c === feed?.seq) return `r.${quoted(c)} + (select coalesce(max(m.${quoted(c)}), 0) from ${target} as m)`
    // greatest() ignores the null of an empty table.
    if (c === feed?.watermark) return `greatest(r.${quoted(c)}, (select m.${quoted(c)} from ${target} as m order by m.${quoted(feed.seq)} desc limit 1))`
    return `r.${quoted(c)}`
  }
  const select = columns ? columns.map(column).join(', ') : 'r.*'
  const into = columns ? ` (${columns.map(quoted).join(', ')})` : ''
  const onConflict = update ? `do update set ${update.map((c) => `${quoted(c)} = excluded.${quoted(c)}`).join(', ')}` : 'do nothing'
  return {
    head: sql.raw(`insert into ${target}${into} select ${select} from json_populate_recordset(null::${target}, `),
    tail: sql.raw(`\n    on conflict (${conflict.map(quoted).join(', ')}) ${onConflict}`),
  }
}
