import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify'
import fp from 'fastify-plugin'
import {
  DomainError, ForbiddenError, IllegalStateError, NotFoundError, UnauthorizedError, ValidationError,
} from '../../shared/errors.js'
import { HttpError } from '../http-error.js'
import { isCancelledStatement, RequestAbandonedError } from '../../infrastructure/database/cancelled-statement.js'
import { isDatabaseUnavailable } from '../../shared/unavailable.js'
import { toFieldErrors } from './validation.js'

/**
 * One error shape for the whole API (DESIGN §3.2): 422 `{message, errors}` naming every failing
 * field by dot path, other errors `{message, code}`, and a 500 that never shows a stack or SQL.
 */
export default fp(async function errors(app: FastifyInstance, opts: { statementTimeoutMs?: number }) {
  app.setErrorHandler((err: FastifyError & { validationContext?: string }, request, reply) => {
    if (err.validation) {
      const errs = toFieldErrors(err.validation, err.validationContext)
      // Cross-field and NUL-character errors found before the schema ran are reported in the same 422.
      for (const [k, msgs] of Object.entries(request.pendingFieldErrors?.errors ?? {})) {
        const list = (errs[k] ??= [])
        for (const m of msgs) if (!list.includes(m)) list.push(m)
      }
      return reply.code(422).send({ message: firstMessage(errs), errors: errs })
    }
    if (err instanceof ValidationError) {
      return reply.code(422).send({ message: firstMessage(err.errors), errors: err.errors })
    }
    if (err instanceof DomainError) {
      return reply.code(statusOf(err)).send({ message: err.message, code: err.code })
    }
    if (err instanceof HttpError) {
      const retryAfter = retryAfterOf(err)
      if (err.code === 'rate_limited' || retryAfter !== undefined) reply.header('retry-after', String(retryAfter ?? 60))
      return reply.code(err.statusCode).send({ message: err.message, code: err.code })
    }
    const status = err.statusCode ?? 500
    if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || (err instanceof SyntaxError && status === 400)) {
      return reply.code(400).send({ message: 'The request body is not valid JSON.', code: 'invalid_json' })
    }
    if (status >= 400 && status < 500) {
      return reply.code(status).send({ message: err.message, code: CODE_OF_STATUS[status] ?? 'bad_request' })
    }
    if (isCancelledStatement(err) || err instanceof RequestAbandonedError) {
      // A client that left (its reads cancelled, request-reads.ts) reads no answer.
      if (reply.raw.destroyed) request.log.info({ code: err.code }, 'client gone: its reads were cancelled')
      else request.log.warn({ err }, 'a statement was cancelled (statement timeout, or pg_cancel_backend)')
      return statementCancelled(reply, opts.statementTimeoutMs)
    }
    if (isDatabaseUnavailable(err)) {
      // Restarting, crashed, a dropped connection, no connection within DATABASE_CONNECT_TIMEOUT_MS:
      // the pools reconnect by themselves, so the same request is worth sending again shortly.
      request.log.warn({ err }, 'database unavailable: answered 503')
      reply.header('retry-after', String(DATABASE_RETRY_AFTER_S))
      return reply.code(503).send({ message: 'The database cannot be reached right now; try again shortly.', code: 'database_unavailable' })
    }
    if (isPostgresDataException(err)) {
      // Input the schemas let through but the database refused (out of range, bad encoding): still the
      // caller's input, so never a 500; logged so the missing schema limit gets added.
      request.log.warn({ err }, 'input refused by the database: a schema limit is missing')
      const errs = { request: ['A value in the request is out of range or not valid.'] }
      return reply.code(422).send({ message: errs.request[0], errors: errs })
    }
    request.log.error({ err }, 'unhandled error')
    return reply.code(500).send({ message: 'Internal server error.', code: 'internal_error' })
  })

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ message: `Route ${request.method} ${request.url.split('?')[0]} not found.`, code: 'route_not_found' })
  })
}, { name: 'errors' })

/**
 * A statement the database cancelled: by the request's statement timeout (REQUEST_STATEMENT_TIMEOUT_MS),
 * or on an administrator's word. The server is busy, not broken: a 503 the client may retry after
 * about as long again.
 */
function statementCancelled(reply: FastifyReply, timeoutMs: number | undefined) {
  const limit = timeoutMs ? ` (statement timeout ${timeoutMs} ms)` : ''
  reply.header('retry-after', String(Math.max(1, Math.ceil((timeoutMs ?? 0) / 1000))))
  return reply.code(503).send({ message: `The database cancelled this request's work${limit}; try again later.`, code: 'statement_timeout' })
}

/** A restart takes a second or two; a fast retry finds the pools reconnected. */
const DATABASE_RETRY_AFTER_S = 1

const CODE_OF_STATUS: Readonly<Record<number, string>> = {
  400: 'bad_request', 404: 'not_found', 413: 'payload_too_large', 415: 'unsupported_media_type', 406: 'not_acceptable',
}

/** The seconds a rate limit's error asks the caller to wait (its subclasses carry them, HttpError does not). */
const retryAfterOf = (err: HttpError): unknown => ('retryAfter' in err ? err.retryAfter : undefined)

/**
 * The one mapping from domain errors to HTTP statuses. A refused state change is a 409 (the
 * specification's answer for cancelled, final, in-transit, already-exists and the like).
 */
const STATUS_OF_ERROR: ReadonlyArray<readonly [abstract new (...args: any[]) => DomainError, number]> = [
  [ValidationError, 422],
  [UnauthorizedError, 401],
  [ForbiddenError, 403],
  [NotFoundError, 404],
  [IllegalStateError, 409],
]

export function statusOf(err: DomainError): number {
  for (const [type, status] of STATUS_OF_ERROR) if (err instanceof type) return status
  return 400
}

/** SQLSTATE class 22 (data exception) (pg). */
const isPostgresDataException = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' && /^22[0-9A-Z]{3}$/.test(err.code)
  && 'severity' in err && typeof err.severity === 'string'

function firstMessage(errs: Record<string, string[]>): string {
  const all = Object.values(errs).flat()
  const first = all[0] ?? 'The given data was invalid.'
  return all.length > 1 ? `${first} (and ${all.length - 1} more error${all.length > 2 ? 's' : ''})` : first
}
