import { TaskAttachmentEnvelope, TaskAttachmentParams, TaskAttachments, TaskParams } from '../../schemas/api/tasks.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import type { TaskAttachmentAdded } from '../../schemas/events/tasks.js'
import type { TaskAttachmentItem } from '../../projections/tasks/tables.js'
import { NotFoundError } from '../shared/errors.js'
import { handleCommand } from '../shared/command-handler.js'
import { publicId } from '../shared/ids.js'
import { uploads } from '../http/plugins/multipart.js'
import { imageOrPdf, readAttachmentUpload } from '../http/attachment-upload.js'
import { contentDisposition } from '../http/stored-file.js'
import { commandContext } from '../http/command-context.js'
import { callerOf } from '../http/plugins/auth.js'
import type { RoutesPlugin } from '../http/module.js'
import type { Platform } from '../platform.js'
import { requireTask, taskDeciderOf, taskStream, type TaskEvent, type TaskState } from './task.js'
import { attachmentItem, findTask, type TaskRow } from './queries.js'
import { taskViewerOf, type TaskViewer } from './visibility.js'
import { driversToo } from './task-command.js'

export type AddTaskAttachment = { type: 'AddTaskAttachment'; data: TaskAttachmentAdded }

/** Proof may be added in any state: a photo taken at a failed attempt is still evidence. */
export function decide(command: AddTaskAttachment, state: TaskState): TaskEvent[] {
  requireTask(state, command.data.organization_id)
  return [{ type: 'TaskAttachmentAdded', data: command.data }]
}

export const decider = taskDeciderOf(decide)

const attachmentsOf = (r: TaskRow): TaskAttachmentItem[] => (typeof r.attachments === 'string' ? JSON.parse(r.attachments) : r.attachments)

async function requireVisibleTask(platform: Platform, viewer: TaskViewer, ulid: string): Promise<TaskRow> {
  const row = await findTask(platform.rm, viewer, ulid)
  if (!row) throw new NotFoundError('Task')
  return row
}

/** Proof of delivery (DESIGN §3.9): photos and PDFs of a task, through the blob port. */
export const taskAttachmentRoutes: RoutesPlugin = async (app, { platform }) => {
  await app.register(uploadTaskAttachmentRoute, { platform })

  app.get('/tasks/:ulid/attachments', {
    config: driversToo,
    schema: { tags: ['tasks'], summary: 'Attachments of a task', params: TaskParams, response: { 200: TaskAttachments, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => {
    const row = await requireVisibleTask(platform, taskViewerOf(req), req.params.ulid)
    return { attachments: attachmentsOf(row).map((a) => attachmentItem(row.ulid, a)) }
  })

  app.get('/tasks/:ulid/attachments/:attachment_id', {
    config: driversToo,
    schema: { tags: ['tasks'], summary: 'Download a task attachment', params: TaskAttachmentParams },
  }, async (req, reply) => {
    const row = await requireVisibleTask(platform, taskViewerOf(req), req.params.ulid)
    const item = attachmentsOf(row).find((a) => a.id === req.params.attachment_id)
    const data = item ? await platform.blobs.get(item.blob_key) : null
    if (!item || !data) throw new NotFoundError('Attachment')
    return reply
      .header('content-type', item.content_type)
      // Always a download: the bytes and their declared type are the uploader's.
      .header('content-disposition', contentDisposition('attachment', item.filename))
      .send(data)
  })
}

/** The upload alone in its scope: only it runs the multipart parser's hooks (see plugins/multipart.ts). */
const uploadTaskAttachmentRoute: RoutesPlugin = async (app, { platform }) => {
  await app.register(uploads)

  app.post('/tasks/:ulid/attachments', {
    config: driversToo,
    schema: {
      tags: ['tasks'], summary: 'Upload proof (multipart: part `file`, an image or a PDF up to 10 MB; optional field `description`)',
      consumes: ['multipart/form-data'], params: TaskParams, response: { 201: TaskAttachmentEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req, reply) => {
    const viewer = taskViewerOf(req)
    const row = await requireVisibleTask(platform, viewer, req.params.ulid)
    const f = await readAttachmentUpload(req, imageOrPdf)
    const id = publicId('att')
    const stored = await platform.blobs.put(`task-attachments/${row.ulid}/${id}`, f.data, f.contentType)
    const ctx = commandContext(platform, req)
    const caller = callerOf(req)
    const data: TaskAttachmentAdded = {
      ulid: row.ulid, organization_id: viewer.organizationId, id, filename: f.filename, content_type: f.contentType,
      size: stored.size, sha256: stored.sha256, blob_key: stored.key, description: f.description,
      uploaded_by: caller.user?.id ?? caller.organization.id, uploaded_at: ctx.now.toISOString(),
    }
    await handleCommand(platform.commands, taskStream(row.ulid), decider, { type: 'AddTaskAttachment', data }, ctx)
    return reply.code(201).send({ success: true, attachment: attachmentItem(row.ulid, data) })
  })
}
