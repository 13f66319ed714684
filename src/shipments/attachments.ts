import { Type } from 'typebox'
import { Attachment, AttachmentParams, ShipmentIdParams } from '../../schemas/api/shipments.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { NotFoundError } from '../shared/errors.js'
import { handleCommand } from '../shared/command-handler.js'
import { publicId } from '../shared/ids.js'
import { organizationOf } from '../http/plugins/auth.js'
import { uploads } from '../http/plugins/multipart.js'
import { readAttachmentUpload } from '../http/attachment-upload.js'
import { contentDisposition } from '../http/stored-file.js'
import { commandContext } from '../http/command-context.js'
import { requireVisibleShipment } from './shipment-view.js'
import type { AttachmentAdded } from '../../schemas/events/shipments.js'
import { requireExisting, shipmentDeciderOf, shipmentStream, type ShipmentEvent, type ShipmentState } from './shipment.js'
import type { RoutesPlugin } from '../http/module.js'
import { iso } from '../shared/rows.js'

export type AddAttachment = { type: 'AddAttachment'; data: AttachmentAdded }

export function decide(command: AddAttachment, state: ShipmentState): ShipmentEvent[] {
  requireExisting(state)
  return [{ type: 'AttachmentAdded', data: command.data }]
}

export const decider = shipmentDeciderOf(decide)

/**
 * Attachments of a shipment (proofs, invoices, photos): the upload is read and checked by
 * http/attachment-upload.ts (shared with task attachments). Bytes go to the blob store, the event
 * records the reference.
 */

const toItem = (id: number, r: { id: string; filename: string; content_type: string; size: unknown; sha256: string; description: string | null; uploaded_by: string; uploaded_at: Date | string }) => ({
  id: r.id, filename: r.filename, content_type: r.content_type, size: Number(r.size), sha256: r.sha256, description: r.description,
  uploaded_by: r.uploaded_by, created_at: iso(r.uploaded_at), url: `/api/v1/shipments/${id}/attachments/${r.id}`,
})

export const attachmentRoutes: RoutesPlugin = async (app, { platform }) => {
  await app.register(uploadAttachmentRoute, { platform })

  app.get('/shipments/:id/attachments', {
    schema: {
      tags: ['shipments'], summary: 'Attachments of a shipment',
      params: ShipmentIdParams, response: { 200: Type.Object({ attachments: Type.Array(Attachment) }), 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const { id } = req.params
    await requireVisibleShipment(platform, org.id, id)
    const rows = await platform.rm.selectFrom('shipment_attachments').selectAll().where('shipment_id', '=', id).orderBy('uploaded_at').orderBy('id').execute()
    return { attachments: rows.map((r) => toItem(id, r)) }
  })

  app.get('/shipments/:id/attachments/:attachment_id', {
    schema: { tags: ['shipments'], summary: 'Download an attachment', params: AttachmentParams },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const { id, attachment_id } = req.params
    await requireVisibleShipment(platform, org.id, id)
    const row = await platform.rm.selectFrom('shipment_attachments').selectAll().where('shipment_id', '=', id).where('id', '=', attachment_id).executeTakeFirst()
    if (!row) throw new NotFoundError('Attachment')
    const data = await platform.blobs.get(row.blob_key)
    if (!data) throw new NotFoundError('Attachment')
    return reply
      .header('content-type', row.content_type)
      // Always a download: the bytes and their declared type are the uploader's.
      .header('content-disposition', contentDisposition('attachment', row.filename))
      .send(data)
  })
}

/** The upload alone in its scope: only it runs the multipart parser's hooks (see plugins/multipart.ts). */
const uploadAttachmentRoute: RoutesPlugin = async (app, { platform }) => {
  await app.register(uploads)

  app.post('/shipments/:id/attachments', {
    schema: {
      tags: ['shipments'], summary: 'Upload an attachment (multipart: part `file`, optional field `description`)',
      consumes: ['multipart/form-data'], params: ShipmentIdParams,
      response: { 201: Type.Object({ success: Type.Boolean(), attachment: Attachment }), 404: ErrorResponse, ...errorResponses },
    },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const { id } = req.params
    await requireVisibleShipment(platform, org.id, id)
    const f = await readAttachmentUpload(req)
    const attachmentId = publicId('att')
    const { filename, contentType, description } = f
    const stored = await platform.blobs.put(`attachments/${id}/${attachmentId}`, f.data, contentType)
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, shipmentStream(id), decider, {
      type: 'AddAttachment',
      data: {
        id: attachmentId, filename, description, uploaded_by: org.id, uploaded_at: ctx.now.toISOString(),
        blob: { key: stored.key, content_type: contentType, size: stored.size, sha256: stored.sha256, filename },
      },
    }, ctx)
    const row = await platform.rm.selectFrom('shipment_attachments').selectAll().where('id', '=', attachmentId).executeTakeFirstOrThrow()
    return reply.code(201).send({ success: true, attachment: toItem(id, row) })
  })
}
