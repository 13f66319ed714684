import { hoistNamedSchemas } from './components.js'
import { OPERATIONS, TAGS, operationKey } from './operations.js'
import { completeResponses, shareErrorResponses } from './responses.js'
import { SECURITY_SCHEMES, securitySchemeOf } from './security.js'

type Operation = { operationId?: string; tags?: string[]; security?: Record<string, string[]>[]; responses?: Record<string, { description?: string }> }
type Document = {
  paths?: Record<string, Record<string, Operation>>
  components?: { schemas?: Record<string, unknown>; responses?: Record<string, unknown>; securitySchemes?: Record<string, unknown> }
  tags?: { name: string; description: string }[]
  security?: unknown
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'])

/**
 * What @fastify/swagger generated from the routes, finished for integrators and generators: named
 * components with `$ref`s, the operation ids and tags of the operations table, the security scheme
 * of each area, and a description on every response. Runs once: @fastify/swagger caches the result.
 */
export function finishDocument<D extends object>(generated: D): D {
  const doc = generated as Document
  hoistNamedSchemas(doc)
  const sharedResponses: Record<string, unknown> = {}
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.has(method)) continue
      const key = operationKey(method, path)
      const entry = OPERATIONS.get(key)
      const scheme = securitySchemeOf(path)
      // The id first: it is what a reader of the document looks for.
      const finished: Operation = entry ? { operationId: entry.operationId, ...operation, tags: [entry.tag] } : operation
      finished.security = scheme ? [{ [scheme]: [] }] : []
      completeResponses(finished, key, scheme)
      shareErrorResponses(finished, sharedResponses)
      item[method] = finished
    }
  }
  delete doc.security
  doc.tags = Object.entries(TAGS).map(([name, description]) => ({ name, description }))
  doc.components = { ...doc.components, responses: sharedResponses, securitySchemes: SECURITY_SCHEMES }
  return generated
}
