import { schemaRef } from './components.js'
import type { SecurityScheme } from './security.js'

/** A response, or (once shared) a `$ref` to the shared one. */
type Response = { description?: string; content?: Record<string, unknown>; $ref?: string }
type Operation = { responses?: Record<string, Response> }

/** What each status means on this API (spec "Errors", DESIGN §3.2), for responses whose schema says nothing. */
const MEANING: Record<string, string> = {
  200: 'OK.',
  201: 'Created.',
  202: 'Accepted: the work is queued.',
  204: 'No content.',
  400: 'The request is malformed (invalid JSON, a bad URL).',
  401: 'Not authenticated: the credential is missing, unknown or revoked.',
  403: 'Not permitted: the credential may not do this (a suspended organization, a shipper on the operations API, a driver).',
  404: 'Not found, or not visible to the caller.',
  406: 'Not acceptable in the record\'s state (a route without a driver, or one already published).',
  409: 'Conflict: the record\'s state refuses the request, the `Idempotency-Key` is still in use, or the rate limit was exceeded (`Retry-After`).',
  413: 'The body or an uploaded file is too large.',
  415: 'The body\'s media type is not accepted here.',
  422: 'Validation error: `errors` names every failing field by its dot path from the request root.',
  '4XX': 'Any other refusal, as `{message, code}`.',
  '5XX': 'Server error, as `{message, code}`.',
}

/**
 * Bodies the route schemas cannot state, because the handler writes them itself: files, labels and
 * the event stream.
 */
const BINARY = (type: string) => ({ schema: { type: 'string', contentMediaType: type } })
const OWN_BODIES: Record<string, Record<string, Response>> = {
  'GET /api/v1/shipments/{id}/label': {
    200: {
      description: 'The label: a PDF (10×15 cm, one page per package), or ZPL with `?format=zpl`.',
      content: { 'application/pdf': BINARY('application/pdf'), 'application/zpl': { schema: { type: 'string' } } },
    },
  },
  'GET /api/v1/shipments/{id}/attachments/{attachment_id}': {
    200: { description: 'The file as uploaded, with its own media type, as a download.', content: { 'application/octet-stream': BINARY('application/octet-stream') } },
  },
  'GET /api/v1/tasks/{ulid}/attachments/{attachment_id}': {
    200: { description: 'The file as uploaded, with its own media type, as a download.', content: { 'application/octet-stream': BINARY('application/octet-stream') } },
  },
  'GET /api/v1/routes/{id}/progress/stream': {
    200: {
      description: 'Server-sent events (`id`, `event`, `data` as JSON `{route_id, task_ulid?, status, progress}`); reconnect with `Last-Event-ID` to resume.',
      content: { 'text/event-stream': { schema: { type: 'string' } } },
    },
  },
}

const error = (status: string): Response => ({ description: MEANING[status]!, content: { 'application/json': { schema: schemaRef('ApiError') } } })

/** The error responses every operation shares, named once in `components.responses`. */
const SHARED: Record<string, string> = {
  400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 406: 'NotAcceptable', 409: 'Conflict',
  413: 'PayloadTooLarge', 415: 'UnsupportedMediaType', 422: 'ValidationFailed', '4XX': 'ClientError', '5XX': 'ServerError',
}

/**
 * An error response that says no more than its status's meaning is replaced by a `$ref` to the
 * shared one (`#/components/responses/NotFound`), which is added to `shared` the first time.
 */
export function shareErrorResponses(operation: Operation, shared: Record<string, unknown>): void {
  const responses = operation.responses
  if (!responses) return
  for (const [status, response] of Object.entries(responses)) {
    const name = SHARED[status]
    const schema = schemaOf(response.content?.['application/json'])
    const plain = name && response.description === MEANING[status] && Object.keys(response.content ?? {}).length === 1
      && JSON.stringify(schema) === JSON.stringify(schemaRef(status === '422' ? 'ValidationError' : 'ApiError'))
    if (!plain) continue
    shared[name] ??= response
    responses[status] = { $ref: `#/components/responses/${name}` }
  }
}

/** The `schema` of a media type object. */
const schemaOf = (media: unknown): unknown =>
  typeof media === 'object' && media !== null && 'schema' in media ? media.schema : undefined

/**
 * Every response gets a description (from its schema, else what its status means here); bodies the
 * handler writes itself are stated; an authenticated area's 401 is listed where the route did not;
 * and every operation ends with `4XX` and `5XX` in the `{message, code}` shape, so that a generated
 * client's error type covers every refusal.
 */
export function completeResponses(operation: Operation, key: string, scheme: SecurityScheme | null | undefined): void {
  const responses = operation.responses ??= {}
  Object.assign(responses, OWN_BODIES[key])
  if (scheme && !responses[401]) responses[401] = error('401')
  for (const status of ['4XX', '5XX']) responses[status] ??= error(status)
  for (const [status, response] of Object.entries(responses)) {
    if (!response.description || response.description === 'Default Response') response.description = MEANING[status] ?? 'Response.'
  }
  // Kept in status order, as a reader scans them.
  operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)))
}
