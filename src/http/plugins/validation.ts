import Ajv, { type AnySchema } from 'ajv'
import addFormats from 'ajv-formats'
import type {
  FastifyInstance, FastifyRequest, FastifySchemaCompiler, FastifySchemaValidationError, preValidationAsyncHookHandler,
} from 'fastify'
import fp from 'fastify-plugin'
import { DECIMAL_INTEGER_PATTERN } from '../../../schemas/api/common.js'
import { ErrorBag, ValidationError, type FieldErrors } from '../../shared/errors.js'
import { parseJsonBodies } from '../json-body.js'
import { compiledOnFirstUse } from '../lazy-compile.js'
import { dateTimeInstant } from './date-time-format.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Field errors found before schema validation (cross-field checks, NUL characters); reported together with the schema's. */
    pendingFieldErrors?: ErrorBag
    /** A cross-field check that threw on input the schema then accepted: a bug, rethrown before the handler. */
    pendingCheckFailure?: unknown
  }
}

/**
 * Bodies are validated strictly (no coercion: a string "5" for an integer is a 422) with every
 * error collected; query strings and params are coerced, since they only ever arrive as text.
 */
function makeAjv(coerce: boolean) {
  const ajv = new Ajv.default({
    allErrors: true,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    // Unions of objects tagged by one property (a blueprint's actions) are checked against their own branch.
    discriminator: true,
  })
  addFormats.default(ajv)
  // A date-time a handler can read and the database store, so that each is refused by its name here.
  ajv.addFormat('date-time', dateTimeInstant)
  return ajv
}

const bodyAjv = makeAjv(false)
const queryAjv = makeAjv(true)

const compiler: FastifySchemaCompiler<AnySchema> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : queryAjv
  return compiledOnFirstUse(() => ajv.compile(schema))
}

const pathOf = (instancePath: string): string =>
  instancePath.replace(/^\//, '').split('/').filter(Boolean).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')).join('.')

const join = (a: string, b: string) => (a ? `${a}.${b}` : b)

const label = (p: string) => p.split('.').pop()?.replace(/_/g, ' ') ?? p

/** The values an `enum` allowed, as listed in its message. */
const listed = (values: unknown): string => (Array.isArray(values) ? values.join(', ') : String(values))

/**
 * Ajv errors → `{"packages.1.height": ["..."]}`, one key per failing field (DESIGN §3.2). Read as
 * fastify hands them over: each keyword's `params` unknown, so only printed or listed.
 */
export function toFieldErrors(errors: readonly FastifySchemaValidationError[], part?: string): FieldErrors {
  // Null prototype: a field named `constructor` or `valueOf` must not find an inherited member.
  const out: FieldErrors = Object.create(null)
  const consts = new Map<string, unknown[]>()
  const add = (k: string, m: string) => {
    const list = (out[k] ??= [])
    if (!list.includes(m)) list.push(m)
  }
  for (const e of errors) {
    const base = pathOf(e.instancePath)
    switch (e.keyword) {
      case 'required': {
        const k = join(base, String(e.params.missingProperty))
        add(k, `The ${label(k)} field is required.`)
        break
      }
      case 'additionalProperties': {
        const k = join(base, String(e.params.additionalProperty))
        add(k, `The ${label(k)} field is not allowed.`)
        break
      }
      case 'maxLength': add(base, `The ${label(base)} may not be greater than ${e.params.limit} characters.`); break
      case 'minLength': add(base, `The ${label(base)} must be at least ${e.params.limit} characters.`); break
      case 'maximum': add(base, `The ${label(base)} may not be greater than ${e.params.limit}.`); break
      case 'minimum': add(base, `The ${label(base)} must be at least ${e.params.limit}.`); break
      case 'maxItems': add(base, `The ${label(base)} may not have more than ${e.params.limit} items.`); break
      case 'minItems': add(base, `The ${label(base)} must have at least ${e.params.limit} item(s).`); break
      case 'enum': add(base, `The selected ${label(base)} is invalid; allowed: ${listed(e.params.allowedValues)}.`); break
      case 'type': add(base || (part ?? 'body'), `The ${label(base) || (part ?? 'body')} must be of type ${e.params.type}.`); break
      case 'format': add(base, `The ${label(base)} must be a valid ${e.params.format}.`); break
      case 'pattern': add(base, e.params.pattern === DECIMAL_INTEGER_PATTERN
        ? `The ${label(base)} must be a whole number in decimal digits (no sign, leading zeros, spaces, exponent or hex).`
        : `The ${label(base)} format is invalid.`); break
      // A union of literals fails one `const` per branch: gathered below into one message listing them.
      case 'const': { const list = consts.get(base) ?? []; list.push(e.params.allowedValue); consts.set(base, list); break }
      case 'discriminator': {
        const k = join(base, String(e.params.tag))
        add(k, `The selected ${label(k)} is invalid.`)
        break
      }
      case 'anyOf': case 'oneOf': case 'if': break // the branch errors already name the fields
      default: add(base || (part ?? 'body'), e.message ?? 'is invalid')
    }
  }
  for (const [k, allowed] of consts) add(k || (part ?? 'body'), `The selected ${label(k) || (part ?? 'body')} is invalid; allowed: ${allowed.join(', ')}.`)
  // A nullable field (anyOf [T, null]) fails both branches; the "must be null" half is noise when the other half spoke.
  for (const [k, msgs] of Object.entries(out)) {
    const kept = msgs.filter((m) => !m.endsWith('must be of type null.'))
    if (kept.length) out[k] = kept
  }
  if (Object.keys(out).length === 0 && errors.length) add(part ?? 'body', 'is invalid')
  return out
}

/** The body as received, before schema validation: any field may be missing or of another type. */
export type UncheckedBody = Record<string, unknown>

export type FieldCheck = (body: UncheckedBody, errors: ErrorBag, req: FastifyRequest) => void | Promise<void>

/** Any object's fields can be read by name, each of unknown type (arrays by index, too). */
const hasFields = (value: unknown): value is UncheckedBody => typeof value === 'object' && value !== null

/**
 * Cross-field checks reported together with the schema's errors (DESIGN §3.2: every failing field).
 * Use as a route's `preValidation`: the check runs on the raw body before the schema, so it must
 * test types before use (`typeof body.to === 'string' && ...`). Its errors join the schema's in one
 * 422; when the schema passes, they alone make the 422 before the handler runs. A check that throws
 * on malformed input is ignored if the schema rejects that input, and rethrown otherwise (a bug).
 *
 *   app.post('/x', { schema: { body: X }, preValidation: fieldChecks((body, errors) => {
 *     if (typeof body.from === 'string' && typeof body.to === 'string' && body.from > body.to) errors.add('to', '...')
 *   }) }, handler)
 */
export function fieldChecks(check: FieldCheck): preValidationAsyncHookHandler {
  return async function runFieldChecks(req) {
    const body = req.body
    if (!hasFields(body) || Array.isArray(body)) return // the schema names the shape error
    const errors = (req.pendingFieldErrors ??= new ErrorBag())
    try {
      await check(body, errors, req)
    } catch (err) {
      if (err instanceof ValidationError) errors.merge('', err.errors)
      else req.pendingCheckFailure = err
    }
  }
}

/**
 * PostgreSQL text cannot hold U+0000: a NUL anywhere in the input would fail in the database as a
 * 500. Report it as a field error instead, at its dot path (body), or by parameter name (query, path).
 */
function findNulCharacters(value: unknown, path: string, errors: ErrorBag, depth = 0): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) errors.add(path || 'body', 'The value may not contain NUL characters.')
  } else if (typeof value === 'object' && value !== null && !ArrayBuffer.isView(value) && depth < 64) {
    for (const [k, v] of Object.entries(value)) {
      const at = join(path, k)
      if (k.includes('\u0000')) errors.add(at, 'The field name may not contain NUL characters.')
      findNulCharacters(v, at, errors, depth + 1)
    }
  }
}

/** The allocation-free check run on every request; `findNulCharacters` names the paths when it finds one. */
function containsNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000')
  if (!hasFields(value) || ArrayBuffer.isView(value) || depth >= 64) return false
  for (const k in value) {
    if (k.includes('\u0000') || containsNul(value[k], depth + 1)) return true
  }
  return false
}

export default fp(async function validation(app: FastifyInstance) {
  app.setValidatorCompiler(compiler)
  // A `__proto__` key is named as a field error (below), not answered as "not valid JSON".
  parseJsonBodies(app)
  // Declared up front so every request object has one shape (V8 keeps property access fast).
  app.decorateRequest('pendingFieldErrors', undefined)
  app.decorateRequest('pendingCheckFailure', undefined)

  // Both hooks run on every request: callbacks, not promises, to keep them cheap.
  app.addHook('preValidation', (req, _reply, done) => {
    if (containsNul(req.params) || containsNul(req.query) || containsNul(req.body)) {
      const errors = (req.pendingFieldErrors ??= new ErrorBag())
      findNulCharacters(req.params, '', errors)
      findNulCharacters(req.query, '', errors)
      findNulCharacters(req.body, '', errors)
    }
    done()
  })

  // Registered before every other preHandler: nothing (idempotency claim, handler) runs on invalid input.
  app.addHook('preHandler', (req, _reply, done) => {
    if (req.pendingFieldErrors && !req.pendingFieldErrors.empty) return done(new ValidationError(req.pendingFieldErrors.errors))
    // Thrown, not passed to done(): a check may have thrown a value that is no Error, and fastify
    // hands a hook's throw to the error handler all the same.
    if (req.pendingCheckFailure !== undefined) throw req.pendingCheckFailure
    done()
  })
}, { name: 'validation' })
