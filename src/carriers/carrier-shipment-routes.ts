import type { FastifyInstance, FastifyRequest } from 'fastify'
import { CarrierShipment, CarrierShipmentEnvelope, CarrierShipmentPage, CarrierShipmentParams, CarrierShipmentsQuery, ReportStatusBody, SetTrackingBody } from '../../schemas/api/carriers.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import type { BlobRef } from '../../schemas/events/shipments.js'
import { AppError, ValidationError } from '../shared/errors.js'
import { handleCommand, type CommandContext } from '../shared/command-handler.js'
import { actorOf } from '../http/plugins/auth.js'
import type { Platform } from '../platform.js'
import { shipmentDecider, shipmentStream, type ShipmentCommand } from '../shipments/shipment.js'
import { carrierShipment, requireCarrierShipment, shipmentFeed } from './carrier-shipments.js'

const DOCUMENT_PARTS = ['label', 'label_zpl', 'waybill'] as const
type DocumentPart = typeof DOCUMENT_PARTS[number]
const CONTENT_TYPES: Record<DocumentPart, string> = { label: 'application/pdf', label_zpl: 'application/zpl', waybill: 'application/pdf' }
const EXTENSIONS: Record<DocumentPart, string> = { label: 'pdf', label_zpl: 'zpl', waybill: 'pdf' }

const ctxOf = (platform: Platform, req: FastifyRequest): CommandContext => ({ now: platform.clock(), actor: actorOf(req), requestId: req.id })
const success = { 200: CarrierShipmentEnvelope, 404: ErrorResponse, ...errorResponses }

/**
 * Carrier API over shipments: the change feed, the detail with `custom_data`, and the carrier's
 * commands (documents, tracking, status), which the shipment aggregate decides.
 */
export async function carrierShipmentRoutes(app: FastifyInstance, { platform }: { platform: Platform }) {
  const run = async (req: FastifyRequest, id: number, command: ShipmentCommand) => {
    const carrierId = req.principal!.carrierId!
    await requireCarrierShipment(platform, carrierId, id)
    await handleCommand(platform.commands, shipmentStream(id), shipmentDecider, command, ctxOf(platform, req))
    return { success: true, shipment: await carrierShipment(platform, carrierId, id) }
  }

  app.get('/shipments', {
    schema: {
      tags: ['carrier API'], summary: 'Shipments of this carrier changed since a time or cursor (change feed; never skips, never repeats an unchanged one)',
      querystring: CarrierShipmentsQuery,
      response: { 200: CarrierShipmentPage, ...errorResponses },
    },
  }, async (req) => shipmentFeed(platform, req.principal!.carrierId!, req.query as { updated_since?: string; cursor?: string; limit?: number }))

  app.get('/shipments/:shipment_id', {
    schema: { tags: ['carrier API'], summary: 'The full shipment, with custom_data (the quote that priced it)', params: CarrierShipmentParams, response: { 200: CarrierShipment, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => carrierShipment(platform, req.principal!.carrierId!, (req.params as { shipment_id: number }).shipment_id))

  app.post('/shipments/:shipment_id/documents', {
    schema: {
      tags: ['carrier API'], summary: 'Upload the label (PDF, part `label`), optional `label_zpl` and `waybill`: Processing → Pending preparation',
      consumes: ['multipart/form-data'], params: CarrierShipmentParams, response: success,
    },
  }, async (req) => {
    const carrierId = req.principal!.carrierId!
    const id = (req.params as { shipment_id: number }).shipment_id
    await requireCarrierShipment(platform, carrierId, id)
    if (!req.isMultipart()) throw ValidationError.field('label', 'Send the documents as multipart/form-data with a part named label.')
    const files = new Map<DocumentPart, { data: Buffer; filename: string }>()
    const errors: Record<string, string[]> = {}
    for await (const part of req.parts()) {
      if (part.type !== 'file') continue
      const data = await part.toBuffer()
      if (part.file.truncated) throw new AppError(413, 'payload_too_large', `The ${part.fieldname} may not be greater than 10 MB.`)
      const name = part.fieldname as DocumentPart
      if (!DOCUMENT_PARTS.includes(name)) { (errors[part.fieldname] ??= []).push(`Unknown part; expected ${DOCUMENT_PARTS.join(', ')}.`); continue }
      if (files.has(name)) { (errors[name] ??= []).push('The part is sent more than once.'); continue }
      files.set(name, { data, filename: part.filename })
    }
    // Per the specification the label format is not validated; only its presence and size.
    if (!files.has('label')) (errors.label ??= []).push('The label field is required.')
    for (const [name, f] of files) if (f.data.length === 0) (errors[name] ??= []).push(`The ${name.replace('_', ' ')} must not be empty.`)
    if (Object.keys(errors).length) throw new ValidationError(errors)
    const refs: Partial<Record<DocumentPart, BlobRef>> = {}
    for (const [name, f] of files) {
      const stored = await platform.blobs.put(`labels/${id}/${name}-${Date.now()}.${EXTENSIONS[name]}`, f.data, CONTENT_TYPES[name])
      refs[name] = { key: stored.key, content_type: CONTENT_TYPES[name], size: stored.size, sha256: stored.sha256, filename: f.filename ? f.filename.slice(0, 255) : null }
    }
    return run(req, id, { type: 'UploadDocuments', data: { label: refs.label!, label_zpl: refs.label_zpl ?? null, waybill: refs.waybill ?? null, documented_at: platform.clock().toISOString() } })
  })

  app.put('/shipments/:shipment_id/tracking', {
    schema: { tags: ['carrier API'], summary: 'Set the tracking number and optional public tracking URL', params: CarrierShipmentParams, body: SetTrackingBody, response: success },
  }, async (req) => {
    const body = req.body as { tracking_number: string; tracking_url?: string | null }
    return run(req, (req.params as { shipment_id: number }).shipment_id, { type: 'SetTracking', data: { tracking_number: body.tracking_number, tracking_url: body.tracking_url ?? null, set_at: platform.clock().toISOString() } })
  })

  app.post('/shipments/:shipment_id/status', {
    schema: { tags: ['carrier API'], summary: 'Report a standardized status (409 before the label, after a final status, or delivered during a return)', params: CarrierShipmentParams, body: ReportStatusBody, response: success },
  }, async (req) => {
    const body = req.body as { status: string; reason?: string | null; message?: string | null; occurred_at?: string | null }
    return run(req, (req.params as { shipment_id: number }).shipment_id, {
      type: 'ReportCarrierStatus',
      data: { status: body.status, reason: body.reason ?? null, message: body.message ?? null, occurred_at: body.occurred_at ?? null, reported_at: platform.clock().toISOString() },
    })
  })
}
