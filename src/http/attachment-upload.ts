import type { FastifyRequest } from 'fastify'
import { ValidationError, type FieldErrors } from '../shared/errors.js'

/**
 * One attachment upload (shipment and task attachments share it): multipart part `file` (one file;
 * the size limit is the uploads plugin's, 10 MB) and an optional `description` field (max 255). The
 * route must sit in a scope that registered `uploads` (plugins/multipart.ts).
 */

export const ATTACHMENT_DESCRIPTION_MAX = 255
const FILENAME_MAX = 255

export interface UploadedAttachment {
  /** Safe to put in a header: no control characters or path separators, at most 255 characters. */
  filename: string
  /** The declared type when it looks like a media type, else application/octet-stream. */
  contentType: string
  data: Buffer
  description: string | null
}

/** Says why a file is refused (a message for `file`), or null when it is acceptable. */
export type FileCheck = (file: { contentType: string; data: Buffer }) => string | null

export async function readAttachmentUpload(req: FastifyRequest, check?: FileCheck): Promise<UploadedAttachment> {
  if (!req.isMultipart()) throw ValidationError.field('file', 'Send the attachment as multipart/form-data with a part named file.')
  let file: { filename: string; mimetype: string; data: Buffer } | null = null
  let description: string | null = null
  const errors: FieldErrors = {}
  for await (const part of req.parts()) {
    if (part.type === 'file') {
      const data = await part.toBuffer()
      if (part.fieldname === 'file' && !file) file = { filename: part.filename, mimetype: part.mimetype, data }
    } else if (part.fieldname === 'description') {
      description = String(part.value ?? '').trim() || null
    }
  }
  const contentType = file && /^[\w.+-]+\/[\w.+-]+$/.test(file.mimetype) ? file.mimetype : 'application/octet-stream'
  if (!file) errors.file = ['The file field is required.']
  else if (file.data.length === 0) errors.file = ['The file must not be empty.']
  else {
    const refused = check?.({ contentType, data: file.data })
    if (refused) errors.file = [refused]
  }
  if (description && description.length > ATTACHMENT_DESCRIPTION_MAX) errors.description = [`The description may not be greater than ${ATTACHMENT_DESCRIPTION_MAX} characters.`]
  if (Object.keys(errors).length) throw new ValidationError(errors)
  const f = file!
  const filename = (f.filename || 'attachment').replace(/[\u0000-\u001f\\/]/g, '_').slice(0, FILENAME_MAX)
  return { filename, contentType, data: f.data, description }
}

// Signatures of the formats we can recognize; a declared type among them must match its bytes.
const MAGIC: Record<string, (b: Buffer) => boolean> = {
  'application/pdf': (b) => b.subarray(0, 5).toString('latin1') === '%PDF-',
  'image/png': (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  'image/jpeg': (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  'image/gif': (b) => b.subarray(0, 4).toString('latin1') === 'GIF8',
  'image/webp': (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
}

/** Proof of delivery: an image or a PDF, whose bytes agree with the declared type when we know its signature. */
export const imageOrPdf: FileCheck = ({ contentType: declared, data }) => {
  const contentType = declared.toLowerCase()
  if (contentType !== 'application/pdf' && !contentType.startsWith('image/')) return 'The file must be an image or a PDF.'
  const matches = MAGIC[contentType]
  if (matches && !matches(data)) return `The file's content is not a valid ${contentType}.`
  return null
}
