import { jsonArrayFrom } from 'kysely/helpers/postgres'
import { CreateShipmentBody, ShipmentEnvelope } from '../../schemas/api/shipments.js'
import { errorResponses } from '../../schemas/api/common.js'
import { ShipmentEvents, type AddressSnapshot, type OrganizationRef, type PackageSnapshot, type ShipmentCreated } from '../../schemas/events/shipments.js'
import { isEvent } from '../../schemas/events/event-map.js'
import { ErrorBag, IllegalStateError } from '../shared/errors.js'
import { appendDecided, awaitReadModels, metadataOf, type CommandContext } from '../shared/command-handler.js'
import { newUlid } from '../shared/ids.js'
import { SequenceBlocks } from '../infrastructure/database/sequence-blocks.js'
import { normalizeCurrency } from '../shared/currency.js'
import { organizationOf, type OrganizationRow } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import { toFieldErrors } from '../http/plugins/validation.js'
import type { Platform } from '../platform.js'
import { checkAddressInput, resolveAddress, type AddressMode } from '../addresses/address-input.js'
import { draftPackage, type PackageDraft } from '../shared/package-input.js'
import { controlNumberReservation, withFreshControlNumber } from './control-number.js'
import { resolveServiceType } from './service-type.js'
import { priceShipment } from '../quotes/price-shipment.js'
import { addMissingCounterpart } from '../carriers/availability.js'
import { initialState, shipmentDeciderOf, shipmentStream, type ShipmentEvent, type ShipmentState } from './shipment.js'
import { toShipment } from './queries.js'
import { trackingLinks } from './tracking-link.js'
import type { Overrides } from './status-catalog.js'
import { viewFromEvents } from './shipment-view.js'
import { PartiesCache } from './parties-cache.js'
import type { RoutesPlugin } from '../http/module.js'

export type CreateShipment = { type: 'CreateShipment'; data: ShipmentCreated }

export function decide(command: CreateShipment, state: ShipmentState): ShipmentEvent[] {
  if (state.exists) throw new IllegalStateError('The shipment already exists.', 'shipment_exists')
  return [{ type: 'ShipmentCreated', data: command.data }]
}

export const decider = shipmentDeciderOf(decide)

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null)

const refOf = (o: { id: string; internal_id: number | string; name: string; subdomain: string }): OrganizationRef =>
  ({ id: o.id, internal_id: Number(o.internal_id), name: o.name, subdomain: o.subdomain })

/**
 * Who ships with whom. A shipper sends `carrier_id`; a carrier sends `shipper_id`; an
 * organization with both roles acts as the side whose counterpart it names. The two must hold an
 * active contract (an organization shipping with itself needs none); otherwise 422 on the field.
 */
async function resolveParties(platform: Platform, org: OrganizationRow, body: Obj, bag: ErrorBag, cache?: PartiesCache) {
  const carrierId = str(body.carrier_id)
  const shipperId = str(body.shipper_id)
  const roles: string[] = org.roles
  let side: 'shipper' | 'carrier' | null = null
  if (carrierId && roles.includes('shipper') && (!shipperId || shipperId === org.id)) side = 'shipper'
  else if (shipperId && roles.includes('carrier') && (!carrierId || carrierId === org.id)) side = 'carrier'
  if (!side) {
    if (carrierId && shipperId) bag.add('shipper_id', 'Send carrier_id (acting as the shipper) or shipper_id (acting as the carrier), not both.')
    else if (carrierId) bag.add('carrier_id', 'Only an organization with the shipper role may send carrier_id; a carrier sends shipper_id.')
    else if (shipperId) bag.add('shipper_id', 'Only an organization with the carrier role may send shipper_id; a shipper sends carrier_id.')
    else addMissingCounterpart(roles, bag)
    return null
  }
  const field = side === 'shipper' ? 'carrier_id' : 'shipper_id'
  const otherId = (side === 'shipper' ? carrierId : shipperId)!
  const needRole = side === 'shipper' ? 'carrier' : 'shipper'
  const key = `${org.id}|${side}|${otherId}`
  const known = cache?.counterpart(key)
  const knownOverrides = cache?.catalog(org.id)
  if (known && knownOverrides) {
    const [carrier, shipper] = side === 'shipper' ? [known, refOf(org)] : [refOf(org), known]
    return { carrier, shipper, overrides: knownOverrides }
  }
  const generation = cache?.begin() ?? 0
  // The counterpart, whether a contract binds the two, and the caller's status catalog (the 201
  // renders statuses with it): one round trip.
  const row = await platform.rm.selectFrom('organizations as o')
    .selectAll('o')
    .select((eb) => eb.selectFrom('contracts as c').select('c.id')
      .where('c.carrier_id', '=', side === 'shipper' ? otherId : org.id)
      .where('c.shipper_id', '=', side === 'shipper' ? org.id : otherId)
      .where('c.status', '=', 'active').limit(1).as('contract_id'))
    .select((eb) => jsonArrayFrom(eb.selectFrom('shipment_status_catalog as sc').select(['sc.code', 'sc.name', 'sc.color']).where('sc.organization_id', '=', org.id)).as('catalog'))
    .where('o.id', '=', otherId).executeTakeFirst()
  const found = row && otherId === org.id ? { ...row, contract_id: 'self' } : row
  const otherRoles: string[] = found ? (typeof found.roles === 'string' ? JSON.parse(found.roles) : found.roles) : []
  if (!found || !otherRoles.includes(needRole)) { bag.add(field, `The selected ${field.replace('_', ' ')} is invalid.`); return null }
  if (!found.contract_id) { bag.add(field, `There is no active contract with this ${needRole}.`); return null }
  const [carrier, shipper] = side === 'shipper' ? [found, org] : [org, found]
  const catalog = (typeof found.catalog === 'string' ? JSON.parse(found.catalog) : found.catalog) as { code: string; name: string | null; color: string | null }[]
  const overrides: Overrides = new Map(catalog.map((c) => [c.code, { name: c.name, color: c.color }]))
  cache?.setCounterpart(key, refOf(found))
  cache?.setCatalog(org.id, overrides, generation)
  return { carrier: refOf(carrier), shipper: refOf(shipper), overrides }
}

const LOCATION_KEYS = ['id', 'place_id', 'city', 'city_id', 'state', 'state_id', 'country', 'country_id']

/** Reused packages (`id`): packages of shipments the caller is a party to. */
async function findReusablePackages(platform: Platform, orgId: string, ids: number[]) {
  if (!ids.length) return new Map<number, PackageSnapshot>()
  const rows = await platform.rm.selectFrom('shipment_packages').selectAll()
    .where('id', 'in', ids)
    .where((eb) => eb.or([eb('shipper_id', '=', orgId), eb('carrier_id', '=', orgId)]))
    .orderBy('created_at', 'desc')
    .execute()
  const out = new Map<number, PackageSnapshot>()
  for (const p of rows) {
    const id = Number(p.id)
    if (out.has(id)) continue
    const m = (value: unknown, original: number | null, unit: string) => ({ value: Number(value), original_value: original, unit })
    out.set(id, {
      id, ulid: p.ulid, reused: true, label_code: p.label_code, external_reference: p.external_reference, description: p.description,
      weight: m(p.grams, p.weight_original, p.weight_unit), length: m(p.length_cm, p.length_original, p.length_unit),
      width: m(p.width_cm, p.width_original, p.width_unit), height: m(p.height_cm, p.height_original, p.height_unit),
      temperature_min: p.temperature_min_c == null ? null : m(p.temperature_min_c, p.temperature_min_original, p.temperature_min_unit ?? 'celsius'),
      temperature_max: p.temperature_max_c == null ? null : m(p.temperature_max_c, p.temperature_max_original, p.temperature_max_unit ?? 'celsius'),
      is_flammable: p.is_flammable, is_corrosive: p.is_corrosive, is_fragile: p.is_fragile, classification: p.classification,
      un_code: p.un_code, declared_value_amount: Number(p.declared_value_amount), declared_value_currency: p.declared_value_currency,
    })
  }
  return out
}

/**
 * Validates and resolves a creation request into the ShipmentCreated payload (minus ids and
 * control number). The route puts Fastify's schema errors in `bag` first; the cross-field and
 * lookup errors join them, so one 422 names every failing field.
 */
export async function prepareShipment(platform: Platform, org: OrganizationRow, body: unknown, bag: ErrorBag, cache?: PartiesCache) {
  if (!isObj(body)) {
    if (bag.empty) bag.add('body', 'The body must be a JSON object.')
    return null
  }
  const modes: Record<string, AddressMode | null> = {}
  for (const path of ['origin', 'destination']) modes[path] = checkAddressInput(body[path], path, bag)
  const hasLocationError = (path: string) => LOCATION_KEYS.some((k) => bag.errors[`${path}.${k}`])

  const currencyRaw = body.declared_value_currency
  let currency: string | null = org.currency
  if (typeof currencyRaw === 'string' && currencyRaw.trim() !== '') {
    currency = normalizeCurrency(currencyRaw) ?? null
    if (!currency) bag.add('declared_value_currency', 'The declared value currency must be an ISO 4217 code.')
  }

  const packagesRaw = Array.isArray(body.packages) ? body.packages : []
  const drafts: (PackageDraft | number | null)[] = packagesRaw.map((p, i) => {
    if (isObj(p) && typeof p.id === 'number' && Number.isInteger(p.id)) return p.id
    return draftPackage(p, `packages.${i}`, bag, currency ?? org.currency)
  })

  // The lookups are independent of each other: one round trip of latency for all of them.
  const addresses: Record<string, AddressSnapshot | null> = {}
  const [parties, reusable] = await Promise.all([
    resolveParties(platform, org, body, bag, cache),
    findReusablePackages(platform, org.id, drafts.filter((d): d is number => typeof d === 'number')),
    ...['origin', 'destination'].map(async (path) => {
      const mode = modes[path]
      addresses[path] = mode && isObj(body[path]) && !hasLocationError(path)
        ? await resolveAddress(platform, org.id, body[path] as Obj, mode, path, bag)
        : null
    }),
  ])
  const seen = new Set<number>()
  drafts.forEach((d, i) => {
    if (typeof d !== 'number') return
    if (!reusable.has(d)) bag.add(`packages.${i}.id`, 'The selected package id is invalid.')
    else if (seen.has(d)) bag.add(`packages.${i}.id`, 'The package id appears more than once.')
    seen.add(d)
  })

  const requestedId = typeof body.service_type_id === 'number' ? body.service_type_id : null
  const requestedCode = str(body.service_type_code)
  const resolved = parties && (requestedId !== null || requestedCode !== null)
    ? await resolveServiceType(platform, parties.carrier.id, { id: requestedId, code: requestedCode }, parties.shipper.id)
    : null
  if (parties && (requestedId !== null || requestedCode !== null) && !resolved) {
    const field = requestedId !== null ? 'service_type_id' : 'service_type_code'
    bag.add(field, `The selected ${field.replace(/_/g, ' ')} is not a service type of this carrier available to the shipper.`)
  }
  if (!bag.empty || !parties || !addresses.origin || !addresses.destination) return null
  const packages = drafts.map((d) => (typeof d === 'number' ? reusable.get(d)! : d!))
  const declared = typeof body.declared_value === 'number'
    ? body.declared_value
    : packages.reduce((sum, p) => sum + p.declared_value_amount, 0)
  // The quote the carrier is handed (carrier API `custom_data.quote`), priced as POST /shipments/quotes would.
  const quote = resolved?.id != null
    ? await priceShipment(platform, { service_type_id: resolved.id, origin: addresses.origin, destination: addresses.destination, packages, declared_value: declared })
    : undefined
  return {
    parties: { carrier: parties.carrier, shipper: parties.shipper }, overrides: parties.overrides, origin: addresses.origin, destination: addresses.destination, packages,
    serviceType: resolved ? { id: resolved.id, code: resolved.code, name: resolved.name, carrier_hub_id: resolved.carrier_hub_id } : null,
    integration: resolved?.integration ?? 'service_routes' as const,
    declared_value: declared,
    declared_value_currency: currency,
    custom_data: quote ? { quote } as Record<string, unknown> : null,
    external_reference: str(body.external_reference),
    requires_pickup: body.requires_pickup === true,
    is_public: body.is_public === true,
    merchant: isObj(body.merchant) ? { name: String(body.merchant.name), code: String(body.merchant.code) } : null,
    promised_delivery_at: typeof body.promised_delivery_at === 'string' ? new Date(body.promised_delivery_at).toISOString() : null,
  }
}

/** Shipment and package ids come in blocks, one pair per platform (process). */
const idBlocks = new WeakMap<Platform, { shipments: SequenceBlocks; packages: SequenceBlocks }>()

async function nextIds(platform: Platform, packages: number): Promise<{ shipmentId: number; packageIds: number[] }> {
  let blocks = idBlocks.get(platform)
  if (!blocks) idBlocks.set(platform, (blocks = { shipments: new SequenceBlocks(platform.db, 'shipment_id_seq'), packages: new SequenceBlocks(platform.db, 'package_id_seq', 128) }))
  const [[shipmentId], packageIds] = await Promise.all([blocks.shipments.take(1), blocks.packages.take(packages)])
  return { shipmentId: shipmentId!, packageIds }
}

/**
 * Takes ids, draws a control number, and appends its reservation and ShipmentCreated in one atomic
 * write (a taken code is drawn again); returns the appended payload once the read models have it.
 */
export async function createShipment(platform: Platform, prepared: NonNullable<Awaited<ReturnType<typeof prepareShipment>>>, ctx: CommandContext): Promise<ShipmentCreated> {
  const earlier = await createdByEarlierTry(platform, ctx)
  if (earlier) return earlier
  const fresh = prepared.packages.filter((p) => !('id' in p)).length
  const ulid = newUlid()
  const { shipmentId, packageIds } = await nextIds(platform, fresh)
  const carrierId = prepared.parties.carrier.id
  const packageUlids = packageIds.map(() => newUlid())
  const { data, position } = await withFreshControlNumber(carrierId, async (controlNumber) => {
    let next = 0
    const packages: PackageSnapshot[] = prepared.packages.map((p, i) => {
      if ('id' in p) return p as PackageSnapshot
      const d = p as PackageDraft
      const k = next++
      return { ...d, id: packageIds[k]!, ulid: packageUlids[k]!, label_code: d.label_code ?? `${controlNumber}${String(i + 1).padStart(3, '0')}` }
    })
    const data: ShipmentCreated = {
      id: shipmentId, ulid, external_reference: prepared.external_reference, control_number: controlNumber,
      service_type: prepared.serviceType, integration: prepared.integration,
      shipper: prepared.parties.shipper, carrier: prepared.parties.carrier,
      origin: prepared.origin, destination: prepared.destination, packages,
      declared_value: prepared.declared_value, declared_value_currency: prepared.declared_value_currency,
      requires_pickup: prepared.requires_pickup, is_public: prepared.is_public, merchant: prepared.merchant,
      promised_delivery_at: prepared.promised_delivery_at, related_shipment_id: null, related_type: null,
      custom_data: prepared.custom_data, created_at: ctx.now.toISOString(),
    }
    // A fresh id names a stream that cannot exist yet: decide on the initial state and append with
    // no_stream (the store still refuses a second creation), skipping handleCommand's read.
    // Named by the Idempotency-Key claim (if any): a retry finds it, and the store's unique event ids
    // refuse a second creation under the same claim.
    const events = decide({ type: 'CreateShipment', data }, initialState()).map((e) => ({ ...e, id: ctx.idempotency?.eventId }))
    const [, created] = await appendDecided(platform.commands, [
      controlNumberReservation(carrierId, controlNumber, ulid, ctx.now),
      { streamId: shipmentStream(shipmentId), events, expected: 'no_stream' },
    ], ctx, { wait: false })
    return { data, position: created!.position }
  })
  await awaitReadModels(platform.commands, position)
  return data
}

/**
 * A retried Idempotency-Key whose earlier try failed (a 5xx, or a process that died) may have
 * committed all the same: the database dropped the connection after the commit, before the answer.
 * Its ShipmentCreated carries the claim's event id; found, it is the answer again (read models
 * waited for as after a creation), and nothing is created twice. A store that cannot look events
 * up by id (KurrentDB) goes without.
 */
async function createdByEarlierTry(platform: Platform, ctx: CommandContext): Promise<ShipmentCreated | undefined> {
  const store = platform.commands.store
  if (!ctx.idempotency?.retried || !store.streamOfEvent) return undefined
  const streamId = await store.streamOfEvent(ctx.idempotency.eventId)
  if (!streamId) return undefined
  const created = (await store.readStream(streamId)).find((e) => e.id === ctx.idempotency!.eventId)
  if (!isEvent(ShipmentEvents, 'ShipmentCreated', created)) return undefined
  await awaitReadModels(platform.commands, created.position)
  return created.data
}

export const createShipmentRoutes: RoutesPlugin = async (app, { platform }) => {
  const cache = new PartiesCache()
  const unsubscribe = await platform.changes.subscribe(cache.subscriber)
  app.addHook('onClose', async () => { unsubscribe() })

  app.post('/shipments', {
    attachValidation: true,
    schema: {
      tags: ['shipments'],
      summary: 'Create a shipment (a shipper names carrier_id, a carrier names shipper_id)',
      body: CreateShipmentBody,
      response: { 201: ShipmentEnvelope, ...errorResponses },
    },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const bag = new ErrorBag()
    if (req.validationError) bag.merge('', toFieldErrors((req.validationError as any).validation ?? [], 'body'))
    const prepared = await prepareShipment(platform, org, req.body, bag, cache)
    bag.throwIfAny()
    if (!prepared) throw new Error('shipment preparation failed without errors')
    const ctx = commandContext(platform, req)
    const data = await createShipment(platform, prepared, ctx)
    // The response is the projector's fold of the event just appended: the same row the read
    // model holds (the append waited for it), without reading it back.
    const recorded = { id: '', streamId: shipmentStream(data.id), streamVersion: 1, position: '', type: 'ShipmentCreated', data, metadata: metadataOf(ctx), schemaVersion: 1, recordedAt: ctx.now }
    const view = viewFromEvents([recorded], data.id)!
    return reply.code(201).send({ success: true, shipment: toShipment(view, prepared.overrides, trackingLinks(req, platform)) })
  })
}
