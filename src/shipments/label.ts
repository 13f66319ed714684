import { LabelQuery, ShipmentIdParams } from '../../schemas/api/shipments.js'
import type { BlobRef } from '../../schemas/events/shipments.js'
import { IllegalStateError, NotFoundError } from '../shared/errors.js'
import { handleCommand } from '../shared/command-handler.js'
import { organizationOf } from '../http/plugins/auth.js'
import { contentDisposition, pdfContentType } from '../http/stored-file.js'
import { renderLabelPdf } from './labels/render-pdf.js'
import { renderLabelZpl } from './labels/render-zpl.js'
import type { LabelAddress, LabelInput } from './labels/label-input.js'
import { commandContext } from '../http/command-context.js'
import { findShipmentView, toShipment } from './queries.js'
import { requireExisting, shipmentDeciderOf, shipmentStream, type ShipmentEvent, type ShipmentState } from './shipment.js'
import type { RoutesPlugin } from '../http/module.js'

export type PrintLabel = { type: 'PrintLabel'; data: { printed_at: string; format: 'pdf' | 'zpl'; source: 'carrier' | 'platform' } }

/** The first label retrieval stamps `label_printed_at`; later ones append nothing. */
export function decide(command: PrintLabel, state: ShipmentState): ShipmentEvent[] {
  requireExisting(state)
  if (state.labelPrintedAt) return []
  return [{ type: 'LabelPrinted', data: command.data }]
}

export const decider = shipmentDeciderOf(decide)

/**
 * `GET /shipments/{id}/label` (DESIGN §3.7): the carrier's uploaded label when there is one
 * (`label`, or `label_zpl` for `?format=zpl`), otherwise one made by the labels module (10×15 cm,
 * one page per package). The first retrieval records LabelPrinted (`label_printed_at`).
 * An annulled shipment has no label to print: 409.
 */

type Documents = { label: BlobRef; label_zpl: BlobRef | null; waybill: BlobRef | null } | null

const labelAddress = (a: ReturnType<typeof toShipment>['origin']): LabelAddress => ({
  name: a.name, street: a.street, street_number: a.street_number, floor: a.floor, apartment: a.apartment, zipcode: a.zipcode,
  city: a.city?.name ?? null, state: a.state?.name ?? null, country: a.country?.name ?? null, phone: a.phone,
})

export function labelInputOf(s: ReturnType<typeof toShipment>): LabelInput {
  return {
    shipment_id: s.id, ulid: s.ulid, control_number: s.control_number ?? '', external_reference: s.external_reference,
    carrier_name: s.carrier.name, shipper_name: s.shipper.name, service_type_name: s.serviceType?.name ?? null,
    created_at: s.created_at, origin: labelAddress(s.origin), destination: labelAddress(s.destination),
    packages: s.packages.map((p) => ({
      id: p.id, label_code: p.label_code, grams: p.weight.value, length_cm: p.length.value, width_cm: p.width.value,
      height_cm: p.height.value, description: p.description,
    })),
  }
}

export const labelRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/shipments/:id/label', {
    schema: {
      tags: ['shipments'],
      summary: 'The shipment label: PDF (10×15 cm, one page per package) or ?format=zpl',
      params: ShipmentIdParams, querystring: LabelQuery,
    },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const { id } = req.params
    const format = req.query.format ?? 'pdf'
    const view = await findShipmentView(platform.rm, org.id, id)
    if (!view) throw new NotFoundError('Shipment')
    if (view.final_status === 'cancelled' || view.final_status === 'expired') {
      throw new IllegalStateError(`The shipment is ${view.final_status}; it has no label to print.`, `shipment_${view.final_status}`)
    }
    const docs = (typeof view.documents === 'string' ? JSON.parse(view.documents) : view.documents) as Documents
    const uploaded = format === 'zpl' ? docs?.label_zpl : docs?.label
    let body: Buffer | string | null = uploaded ? await platform.blobs.get(uploaded.key) : null
    const source = body ? 'carrier' as const : 'platform' as const
    if (!body) {
      const input = labelInputOf(toShipment(view))
      body = format === 'zpl' ? renderLabelZpl(input) : await renderLabelPdf(input)
    }
    if (!view.label_printed_at) {
      const ctx = commandContext(platform, req)
      await handleCommand(platform.commands, shipmentStream(id), decider, {
        type: 'PrintLabel', data: { printed_at: ctx.now.toISOString(), format, source },
      }, ctx)
    }
    const name = `label-${view.control_number}.${format}`
    // The carrier's upload is not validated (per the specification): it is shown as a PDF only when
    // its bytes are one, otherwise downloaded as opaque bytes.
    const type = format === 'zpl' ? 'application/zpl; charset=utf-8' : pdfContentType(typeof body === 'string' ? Buffer.from(body) : body)
    return reply
      .header('content-type', type)
      .header('content-disposition', contentDisposition(type === 'application/octet-stream' ? 'attachment' : 'inline', name))
      .send(body)
  })
}
