import { CarrierShipmentParams } from '../../schemas/api/carriers.js'
import type { BlobRef } from '../../schemas/events/shipments.js'
import { IllegalStateError, NotFoundError, ValidationError } from '../shared/errors.js'
import { uploads } from '../http/plugins/multipart.js'
import { carrierCommandResponses, runCarrierCommand, type ByCarrier } from './carrier-command.js'
import { requireCarrierShipment, requireOpen, shipmentDeciderOf, type ShipmentEvent, type ShipmentState } from './shipment.js'
import type { RoutesPlugin } from '../http/module.js'
import { carrierIdOf } from '../http/plugins/auth.js'

/** Slice "upload the documents": the carrier's `POST /shipments/{id}/documents` (multipart). */

export type UploadDocuments = {
  type: 'UploadDocuments'
  data: { label: BlobRef; label_zpl?: BlobRef | null; waybill?: BlobRef | null; documented_at: string } & ByCarrier
}

/**
 * Processing → Pending preparation. A replacement upload is accepted until the parcel is in the
 * carrier's hands (labels get corrected); afterwards, or once annulled/final, it is a 409.
 */
export function decide(command: UploadDocuments, state: ShipmentState): ShipmentEvent[] {
  requireCarrierShipment(state, command.data.carrier_id)
  requireOpen(state, 'upload documents')
  if (state.phase === 'in_carrier_hands') {
    throw new IllegalStateError('The shipment is already in the carrier\'s hands; its documents can no longer change.', 'shipment_in_transit')
  }
  const d = command.data
  return [{ type: 'LabelUploaded', data: { label: d.label, label_zpl: d.label_zpl ?? null, waybill: d.waybill ?? null, documented_at: d.documented_at } }]
}

export const decider = shipmentDeciderOf(decide)

const DOCUMENT_PARTS = ['label', 'label_zpl', 'waybill'] as const
type DocumentPart = typeof DOCUMENT_PARTS[number]
const CONTENT_TYPES: Record<DocumentPart, string> = { label: 'application/pdf', label_zpl: 'application/zpl', waybill: 'application/pdf' }
const EXTENSIONS: Record<DocumentPart, string> = { label: 'pdf', label_zpl: 'zpl', waybill: 'pdf' }

/** The upload alone in its scope: only it runs the multipart parser's hooks (see plugins/multipart.ts). */
export const uploadDocumentsRoutes: RoutesPlugin = async (app, { platform }) => {
  await app.register(uploads)

  app.post('/shipments/:shipment_id/documents', {
    schema: {
      tags: ['carrier API'], summary: 'Upload the label (PDF, part `label`), optional `label_zpl` and `waybill`: Processing → Pending preparation',
      consumes: ['multipart/form-data'], params: CarrierShipmentParams, response: carrierCommandResponses,
    },
  }, async (req) => {
    const carrierId = carrierIdOf(req)
    const id = req.params.shipment_id
    // Checked before reading the body, so no bytes are stored for a shipment that is not the caller's.
    const row = await platform.rm.selectFrom('shipments').select('id').where('id', '=', id).where('carrier_hub_id', '=', carrierId).executeTakeFirst()
    if (!row) throw new NotFoundError('Shipment')
    if (!req.isMultipart()) throw ValidationError.field('label', 'Send the documents as multipart/form-data with a part named label.')
    const files = new Map<DocumentPart, { data: Buffer; filename: string }>()
    const errors: Record<string, string[]> = {}
    for await (const part of req.parts()) {
      if (part.type !== 'file') continue
      const data = await part.toBuffer()
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
    return runCarrierCommand(platform, req, id, decider, {
      type: 'UploadDocuments',
      data: { label: refs.label!, label_zpl: refs.label_zpl ?? null, waybill: refs.waybill ?? null, documented_at: platform.clock().toISOString(), carrier_id: carrierId },
    })
  })
}
