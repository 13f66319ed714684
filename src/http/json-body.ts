import type { FastifyInstance } from 'fastify'
import { ErrorBag } from '../shared/errors.js'

const hasOwn = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key)
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null

/**
 * The keys secure-json-parse refuses (fastify's JSON parser): `__proto__`, and `prototype` inside a
 * `constructor`, either of which a careless merge would turn into a change of an object's
 * prototype. Each is deleted from `value` and named by its dot path (array items by index), as
 * the schema's errors name fields. `value` comes from JSON.parse, which keeps `__proto__` as an own
 * key. Walked without recursion: the body passed JSON.parse, however deep it nests.
 */
export function takePrototypeKeys(value: unknown): string[] {
  const found: string[] = []
  const stack: Array<[unknown, string]> = [[value, '']]
  const at = (path: string, key: string) => (path ? `${path}.${key}` : key)
  while (stack.length > 0) {
    const [node, path] = stack.pop()!
    if (!isObject(node)) continue
    if (hasOwn(node, '__proto__')) {
      found.push(at(path, '__proto__'))
      delete node['__proto__']
    }
    const ctor = hasOwn(node, 'constructor') ? node['constructor'] : undefined
    if (isObject(ctor) && hasOwn(ctor, 'prototype')) {
      found.push(at(path, 'constructor.prototype'))
      delete ctor['prototype']
    }
    for (const key of Object.keys(node)) stack.push([node[key], at(path, key)])
  }
  return found.sort()
}

/**
 * JSON bodies: fastify's own parser, but a body it refuses only for such a key is no "not valid
 * JSON" (it is valid): the keys are taken out and named as field errors, which the validation
 * plugin (which declares `pendingFieldErrors`) reports in one 422 with the schema's own, before
 * any handler runs.
 */
export function parseJsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body: string, done) => {
    void parse(req, body, (err, parsed) => {
      if (!err) return done(null, parsed)
      let value: unknown
      try { value = JSON.parse(body) } catch { return done(err) } // not JSON at all
      const keys = takePrototypeKeys(value)
      if (keys.length === 0) return done(err)
      const errors = (req.pendingFieldErrors ??= new ErrorBag())
      for (const k of keys) errors.add(k, `The ${k.split('.').pop()} field is not allowed: a key that could reach an object's prototype.`)
      done(null, value)
    })
  })
}
