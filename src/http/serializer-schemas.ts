/**
 * A response schema as fast-json-stringify serializes it fastest, with the same output for every
 * answer the schema allows. fast-json-stringify serializes `anyOf`/`oneOf` by validating the value
 * against each branch with ajv, whose first call compiles the route's whole response schema:
 * 50–100 ms per route, most of the CPU a short-lived process (a CLI run, a test file) spends on
 * its answers. Our unions are mostly "this or null" and lists of literals, which it can write
 * without asking ajv:
 * - `anyOf: [S, {type: 'null'}]` (S without a union of its own) is S with `nullable: true`;
 * - a union of string literals (with or without null) is a string (nullable): the value is one of
 *   them already, and a literal is written as its text.
 * Any other union is left as it is. The schema served in OpenAPI and used for validation is not
 * touched: this copy only feeds the serializer.
 */
type Node = Record<string, unknown>

const isObject = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v)
const isNull = (s: unknown): boolean => isObject(s) && s.type === 'null' && Object.keys(s).every((k) => k === 'type' || k === 'description')
const COMBINATORS = ['anyOf', 'oneOf', 'allOf', 'not', 'if', '$ref'] as const
const hasCombinator = (s: Node): boolean => COMBINATORS.some((k) => k in s)
const isStringLiteral = (s: unknown): boolean =>
  isObject(s) && typeof s.const === 'string' && (s.type === undefined || s.type === 'string') && !hasCombinator(s)

function withoutUnion(node: Node, key: 'anyOf' | 'oneOf'): Node {
  const { [key]: _, ...rest } = node
  return rest
}

function simplified(node: Node): Node {
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = node[key]
    if (!Array.isArray(branches) || branches.length < 2 || hasCombinator(withoutUnion(node, key))) continue
    const others = branches.filter((b) => !isNull(b))
    const nullable = others.length < branches.length
    if (others.length === 1 && nullable && isObject(others[0]) && !hasCombinator(others[0]) && typeof others[0].type === 'string') {
      return { ...withoutUnion(node, key), ...others[0], nullable: true }
    }
    if (others.length > 0 && others.every(isStringLiteral)) {
      return { ...withoutUnion(node, key), type: 'string', ...(nullable ? { nullable: true } : {}) }
    }
  }
  return node
}

function rewrite(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewrite)
  if (!isObject(value)) return value
  const out: Node = {}
  for (const [k, v] of Object.entries(value)) out[k] = rewrite(v)
  return simplified(out)
}

const cache = new WeakMap<object, unknown>()

/** The serializer's copy of a response schema (see above); one per schema object. */
export function serializerSchema<S>(schema: S): S {
  if (!isObject(schema)) return schema
  let copy = cache.get(schema)
  if (copy === undefined) {
    copy = rewrite(schema)
    cache.set(schema, copy)
  }
  return copy as S
}
