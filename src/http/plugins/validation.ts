import Ajv, { type ErrorObject } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify'
import fp from 'fastify-plugin'
import type { FieldErrors } from '../../shared/errors.js'

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
  })
  addFormats.default(ajv)
  return ajv
}

const bodyAjv = makeAjv(false)
const queryAjv = makeAjv(true)

const compiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : queryAjv
  return ajv.compile(schema as object) as any
}

const pathOf = (instancePath: string): string =>
  instancePath.replace(/^\//, '').split('/').filter(Boolean).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')).join('.')

const join = (a: string, b: string) => (a ? `${a}.${b}` : b)

/** Ajv errors → `{"packages.1.height": ["..."]}`, one key per failing field (DESIGN §3.2). */
export function toFieldErrors(errors: ErrorObject[], part?: string): FieldErrors {
  const out: FieldErrors = {}
  const add = (k: string, m: string) => {
    const list = (out[k] ??= [])
    if (!list.includes(m)) list.push(m)
  }
  for (const e of errors) {
    const base = pathOf(e.instancePath)
    const label = (p: string) => p.split('.').pop()?.replace(/_/g, ' ') ?? p
    switch (e.keyword) {
      case 'required': {
        const k = join(base, String((e.params as any).missingProperty))
        add(k, `The ${label(k)} field is required.`)
        break
      }
      case 'additionalProperties': {
        const k = join(base, String((e.params as any).additionalProperty))
        add(k, `The ${label(k)} field is not allowed.`)
        break
      }
      case 'maxLength': add(base, `The ${label(base)} may not be greater than ${(e.params as any).limit} characters.`); break
      case 'minLength': add(base, `The ${label(base)} must be at least ${(e.params as any).limit} characters.`); break
      case 'maximum': add(base, `The ${label(base)} may not be greater than ${(e.params as any).limit}.`); break
      case 'minimum': add(base, `The ${label(base)} must be at least ${(e.params as any).limit}.`); break
      case 'maxItems': add(base, `The ${label(base)} may not have more than ${(e.params as any).limit} items.`); break
      case 'minItems': add(base, `The ${label(base)} must have at least ${(e.params as any).limit} item(s).`); break
      case 'enum': add(base, `The selected ${label(base)} is invalid; allowed: ${((e.params as any).allowedValues as unknown[]).join(', ')}.`); break
      case 'type': add(base || (part ?? 'body'), `The ${label(base) || (part ?? 'body')} must be of type ${(e.params as any).type}.`); break
      case 'format': add(base, `The ${label(base)} must be a valid ${(e.params as any).format}.`); break
      case 'pattern': add(base, `The ${label(base)} format is invalid.`); break
      case 'anyOf': case 'oneOf': case 'if': break // the branch errors already name the fields
      default: add(base || (part ?? 'body'), e.message ?? 'is invalid')
    }
  }
  // A nullable field (anyOf [T, null]) fails both branches; the "must be null" half is noise when the other half spoke.
  for (const [k, msgs] of Object.entries(out)) {
    const kept = msgs.filter((m) => !m.endsWith('must be of type null.'))
    if (kept.length) out[k] = kept
  }
  if (Object.keys(out).length === 0 && errors.length) add(part ?? 'body', 'is invalid')
  return out
}

export default fp(async function validation(app: FastifyInstance) {
  app.setValidatorCompiler(compiler)
}, { name: 'validation' })
