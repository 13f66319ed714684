import type { FastifyError, FastifyInstance, RouteOptions } from 'fastify'
import multipart from '@fastify/multipart'
import fp from 'fastify-plugin'
import { HttpError } from '../http-error.js'
import { takesMultipart } from '../route-hooks.js'

export const UPLOAD_LIMITS = { fileSize: 10 * 1024 * 1024, files: 5, fields: 20 }
const MB = UPLOAD_LIMITS.fileSize / (1024 * 1024)

/**
 * Multipart bodies for the routes of the plugin that registers this one (it is not encapsulated:
 * it joins its caller's scope). An upload route lives in a small plugin of its own that registers
 * this first, so @fastify/multipart's per-request hooks (a 'close' listener on arrival, temp-file
 * cleanup on response) run on upload routes only, and a multipart body sent anywhere else is a 415.
 *
 * The scope's error handler turns what the parser raises into the API's shapes and hands the result
 * to the root error handler: busboy's errors are plain Errors (a missing or unused boundary, a part
 * cut short) that would otherwise be a 500.
 */
export const uploads = fp(async function uploads(app: FastifyInstance) {
  await app.register(multipart, { limits: UPLOAD_LIMITS })
  app.setErrorHandler((err: FastifyError, _req, _reply) => { throw uploadError(err) ?? err })
}, { name: 'uploads' })

/** The API error for an error the multipart parser raised, or null for anything else. */
export function uploadError(err: FastifyError & { part?: { fieldname?: string } }): HttpError | null {
  switch (err.code) {
    case 'FST_REQ_FILE_TOO_LARGE': return new HttpError(413, 'payload_too_large', `The ${err.part?.fieldname ?? 'file'} part may not be greater than ${MB} MB.`)
    case 'FST_FILES_LIMIT': return new HttpError(413, 'payload_too_large', `At most ${UPLOAD_LIMITS.files} files may be sent at once.`)
    case 'FST_FIELDS_LIMIT': return new HttpError(413, 'payload_too_large', `At most ${UPLOAD_LIMITS.fields} fields may be sent at once.`)
    case 'FST_PARTS_LIMIT': return new HttpError(413, 'payload_too_large', 'The multipart body has too many parts.')
    case 'FST_PROTO_VIOLATION': return new HttpError(400, 'bad_multipart', 'A part may not be named like an object property (such as constructor or __proto__).')
    case 'FST_INVALID_JSON_FIELD_ERROR': return new HttpError(400, 'bad_multipart', 'A part declared as application/json is not valid JSON.')
    case 'FST_MP_PREMATURE_CLOSE': return new HttpError(400, 'bad_multipart', 'The request was closed before the multipart body ended.')
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE': return new HttpError(415, 'unsupported_media_type', 'Send the body as multipart/form-data.')
  }
  // busboy raises plain Errors without a code (their messages vary with its version); what marks
  // them is where they were made. The parser only sees the request body, so they are all 400s.
  if (err instanceof Error && err.code === undefined && BUSBOY_FRAME.test(err.stack ?? '')) {
    return new HttpError(400, 'bad_multipart', `The multipart body is malformed (${err.message.replace(/\.$/, '')}).`)
  }
  return null
}

const BUSBOY_FRAME = /[\\/]@fastify[\\/]busboy[\\/]/

/**
 * A route that declares a multipart body (`schema.consumes`) must sit in a scope that registered
 * `uploads`; otherwise it would have no parser (a 415) or, worse, no mapping of malformed bodies.
 * Checked once per route at startup, so a new upload route cannot forget it.
 */
export function requireUploadsScope(this: FastifyInstance, route: RouteOptions): void {
  if (takesMultipart(route) && !this.hasPlugin('uploads')) {
    throw new Error(`${route.method} ${route.url} takes multipart/form-data: register the uploads plugin (src/http/plugins/multipart.ts) in its plugin's scope.`)
  }
}
