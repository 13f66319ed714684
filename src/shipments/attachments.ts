import type { FastifyInstance, FastifyReply } from 'fastify'
import { Type } from 'typebox'
import { Attachment, AttachmentParams, ShipmentIdParams } from '../../schemas/api/shipments.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { AppError, NotFoundError, ValidationError } from '../shared/errors.js'
import { handleCommand } from '../shared/command-handler.js'
import { publicId } from '../shared/ids.js'
import { organizationOf } from '../http/plugins/auth.js'
import type { Platform } from '../platform.js'
import { commandContext } from './create-shipment.js'
import { requireVisibleShipment } from './read-shipments.js'
import { shipmentDecider, shipmentStream } from './shipment.js'

/**
 * Attachments of a shipment (proofs, invoices, photos): multipart part `file` (one file, up to the
 * global 10 MB limit) and an optional `description` field (max 255). Bytes go to the blob store,
 * the event records the reference.
 */

export const ATTACHMENT_DESCRIPTION_MAX = 255
const FILENAME_MAX = 255

const iso = (v: unknown) => new Date(v as string).toISOString()

export async function attachmentRoutes(app: FastifyInstance, { platform }: { platform: Platform }) {
  const toItem = (id: number, r: { id: string; filename: string; content_type: string; size: unknown; sha256: string; description: string | null; uploaded_by: string; uploaded_at: unknown }) => ({
    id: r.id, filename: r.filename, content_type: r.content_type, size: Number(r.size), sha256: r.sha256, description: r.description,
    uploaded_by: r.uploaded_by, created_at: iso(r.uploaded_at), url: `/api/v1/shipments/${id}/attachments/${r.id}`,
  })

  app.post('/shipments/:id/attachments', {
    schema: {
      tags: ['shipments'], summary: 'Upload an attachment (multipart: part `file`, optional field `description`)',
      consumes: ['multipart/form-data'], params: ShipmentIdParams,
      response: { 201: Type.Object({ success: Type.Boolean(), attachment: Attachment }), 404: ErrorResponse, ...errorResponses },
    },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const { id } = req.params as { id: number }
    await requireVisibleShipment(platform, org.id, id)
    if (!req.isMultipart()) throw ValidationError.field('file', 'Send the attachment as multipart/form-data with a part named file.')
    let file: { filename: string; mimetype: string; data: Buffer } | null = null
    let description: string | null = null
    const errors: Record<string, string[]> = {}
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        const data = await part.toBuffer()
        if (part.file.truncated) throw new AppError(413, 'payload_too_large', 'The file may not be greater than 10 MB.')
        if (part.fieldname === 'file' && !file) file = { filename: part.filename, mimetype: part.mimetype, data }
      } else if (part.fieldname === 'description') {
        description = String(part.value ?? '').trim() || null
      }
    }
    if (!file) errors.file = ['The file field is required.']
    else if (file.data.length === 0) errors.file = ['The file must not be empty.']
    if (description && description.length > ATTACHMENT_DESCRIPTION_MAX) errors.description = [`The description may not be greater than ${ATTACHMENT_DESCRIPTION_MAX} characters.`]
    if (Object.keys(errors).length) throw new ValidationError(errors)
    const f = file!
    const attachmentId = publicId('att')
    const filename = (f.filename || 'attachment').replace(/[\u0000-\u001f\\/]/g, '_').slice(0, FILENAME_MAX)
    const contentType = /^[\w.+-]+\/[\w.+-]+$/.test(f.mimetype) ? f.mimetype : 'application/octet-stream'
    const stored = await platform.blobs.put(`attachments/${id}/${attachmentId}`, f.data, contentType)
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, shipmentStream(id), shipmentDecider, {
      type: 'AddAttachment',
      data: {
        id: attachmentId, filename, description, uploaded_by: org.id, uploaded_at: ctx.now.toISOString(),
        blob: { key: stored.key, content_type: contentType, size: stored.size, sha256: stored.sha256, filename },
      },
    }, ctx)
    const row = await platform.rm.selectFrom('shipment_attachments').selectAll().where('id', '=', attachmentId).executeTakeFirstOrThrow()
    return reply.code(201).send({ success: true, attachment: toItem(id, row) })
  })

  app.get('/shipments/:id/attachments', {
    schema: {
      tags: ['shipments'], summary: 'Attachments of a shipment',
      params: ShipmentIdParams, response: { 200: Type.Object({ attachments: Type.Array(Attachment) }), 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const { id } = req.params as { id: number }
    await requireVisibleShipment(platform, org.id, id)
    const rows = await platform.rm.selectFrom('shipment_attachments').selectAll().where('shipment_id', '=', id).orderBy('uploaded_at').orderBy('id').execute()
    return { attachments: rows.map((r) => toItem(id, r)) }
  })

  app.get('/shipments/:id/attachments/:attachment_id', {
    schema: { tags: ['shipments'], summary: 'Download an attachment', params: AttachmentParams },
  }, async (req, reply: FastifyReply) => {
    const org = organizationOf(req)
    const { id, attachment_id } = req.params as { id: number; attachment_id: string }
    await requireVisibleShipment(platform, org.id, id)
    const row = await platform.rm.selectFrom('shipment_attachments').selectAll().where('shipment_id', '=', id).where('id', '=', attachment_id).executeTakeFirst()
    if (!row) throw new NotFoundError('Attachment')
    const data = await platform.blobs.get(row.blob_key)
    if (!data) throw new NotFoundError('Attachment')
    return reply
      .header('content-type', row.content_type)
      .header('content-disposition', `attachment; filename="${row.filename.replace(/[^\x20-\x7e]|"/g, '_')}"; filename*=UTF-8''${encodeURIComponent(row.filename)}`)
      .send(data)
  })
}
