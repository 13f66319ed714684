import type { FastifyReply } from 'fastify'
import {
  GetShipmentQuery, ListShipmentsQuery, Shipment, ShipmentIdParams, ShipmentsPage,
} from '../../schemas/api/shipments.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { NotFoundError, ValidationError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import type { Platform } from '../platform.js'
import { ShipmentViewCache } from './view-cache.js'
import { viewFromEvents } from './shipment-view.js'
import { findShipmentViewWithCatalog, listShipments, statusOverrides, toShipment, type FoldedShipmentView } from './queries.js'
import { shipmentStream } from './shipment.js'
import { isStatusCode } from './status-catalog.js'
import { nextCursor, requestCursor } from '../http/listing-seek.js'
import type { RoutesPlugin } from '../http/module.js'
import { readsOf } from '../http/request-reads.js'
import { pageOf, pageRequest } from '../http/pagination.js'
import { EventHistory, HistoryQuery } from '../../schemas/api/audit.js'
import { historyResponse } from '../audit/history.js'
import { linksVaryByRequest, trackingLinks } from './tracking-link.js'
import { ShipmentEvents } from '../../schemas/events/shipments.js'
import { isEvent } from '../../schemas/events/event-map.js'

/**
 * The shipment as it was at `asOf`, folded from its event stream (DESIGN §3.8), not from the
 * read model: the same fold the projector runs, over the events recorded up to that instant.
 */
async function shipmentAsOf(platform: Platform, orgId: string, id: number, asOf: Date): Promise<FoldedShipmentView | undefined> {
  // Times are compared at millisecond precision, as /events shows them (the store keeps microseconds).
  const events = (await platform.store.readStream(shipmentStream(id), { until: new Date(asOf.getTime() + 1) }))
    .filter((e) => e.recordedAt.getTime() <= asOf.getTime())
  const created = events.find((e) => isEvent(ShipmentEvents, 'ShipmentCreated', e))
  if (!isEvent(ShipmentEvents, 'ShipmentCreated', created)) return undefined
  const d = created.data
  if (d.shipper.id !== orgId && d.carrier.id !== orgId) return undefined
  return viewFromEvents(events, id)
}

const JSON_TYPE = 'application/json; charset=utf-8'

/** Sends JSON the route's serializer already produced; the typed reply would only take the object. */
const sendRendered = (reply: FastifyReply, json: string) => { reply.type(JSON_TYPE).send(json) }

export const readShipmentRoutes: RoutesPlugin = async (app, { platform }) => {
  const cache = new ShipmentViewCache({ maxEntries: platform.config.shipmentViewCacheEntries })
  const unsubscribe = await platform.changes.subscribe(cache.subscriber)
  app.addHook('onClose', async () => { unsubscribe() })

  /** The current view, rendered once by the route's own serializer and then sent from the cache as is. */
  const renderCurrent = async (reply: FastifyReply, orgId: string, id: number) => {
    const generation = cache.begin()
    const found = await findShipmentViewWithCatalog(platform.rm, orgId, id)
    if (!found) throw new NotFoundError('Shipment')
    const json = reply.serialize(toShipment(found.view, found.overrides, trackingLinks(reply.request, platform))) as string
    // A tracking link made from this request's origin is not an answer for another request.
    if (!(found.view.is_public && linksVaryByRequest(platform))) cache.set(orgId, id, json, generation)
    sendRendered(reply, json)
  }

  app.get('/shipments/:id', {
    schema: {
      tags: ['shipments'],
      summary: 'A shipment (root-level object); ?as_of=<date-time> gives it as it was, from the event log',
      params: ShipmentIdParams, querystring: GetShipmentQuery,
      response: { 200: Shipment, 404: ErrorResponse, ...errorResponses },
    },
  // Not async: a cache hit is answered without a promise.
  }, (req, reply) => {
    const org = organizationOf(req)
    const { id } = req.params
    const { as_of } = req.query
    if (!as_of) {
      const json = cache.get(org.id, id)
      // A string with a JSON content type is sent as it is: the serializer already ran when it was cached.
      if (json !== undefined) { sendRendered(reply, json); return }
      return renderCurrent(reply, org.id, id)
    }
    return (async () => {
      const [view, overrides] = await Promise.all([shipmentAsOf(platform, org.id, id, new Date(as_of)), statusOverrides(platform.rm, org.id)])
      if (!view) throw new NotFoundError('Shipment')
      return toShipment(view, overrides, trackingLinks(req, platform))
    })()
  })

  app.get('/shipments', {
    schema: {
      tags: ['shipments'],
      summary: 'Shipments where the caller is the shipper or the carrier, newest first, paginated',
      querystring: ListShipmentsQuery,
      response: { 200: ShipmentsPage, ...errorResponses },
    },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const q = req.query
    const paging = pageRequest(q)
    const status = q.status?.split(',').map((s) => s.trim()).filter(Boolean)
    const bad = status?.filter((s) => !isStatusCode(s)) ?? []
    if (bad.length) throw ValidationError.field('status', `The selected status is invalid: ${bad.join(', ')}.`)
    if (q.created_from && q.created_to && Date.parse(q.created_from) > Date.parse(q.created_to)) {
      throw ValidationError.field('created_to', 'The created to must be a date after or equal to created from.')
    }
    const cursor = requestCursor(q.cursor, 'number', paging)
    const filters = { status, externalReference: q.external_reference, createdFrom: q.created_from, createdTo: q.created_to }
    const reads = readsOf(platform, reply)
    const [{ views, total, hasMore, last }, overrides] = await Promise.all([
      listShipments(reads.rm, org.id, filters, paging.perPage, paging.page, cursor),
      statusOverrides(reads.rm, org.id),
    ])
    const next = nextCursor(hasMore, last, paging.page)
    return { shipments: { data: views.map((v) => toShipment(v, overrides, trackingLinks(req, platform))), ...pageOf(req, paging, total, views.length, { next }) } }
  })

  app.get('/shipments/:id/events', {
    schema: {
      tags: ['shipments'],
      summary: 'Audit: the shipment\'s whole event history, in order, from the event log; ?proof=true adds each event\'s inclusion proof in the signed audit tree',
      params: ShipmentIdParams, querystring: HistoryQuery,
      response: { 200: EventHistory, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const { id } = req.params
    const events = await platform.store.readStream(shipmentStream(id))
    const created = isEvent(ShipmentEvents, 'ShipmentCreated', events[0]) ? events[0].data : null
    if (!created || (created.shipper.id !== org.id && created.carrier.id !== org.id)) throw new NotFoundError('Shipment')
    return historyResponse(platform, shipmentStream(id), events, req.query)
  })
}
