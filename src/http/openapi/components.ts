import { isDeepStrictEqual } from 'node:util'

/**
 * Named schemas: a TypeBox schema in `schemas/api` with a `title` (`Shipment`, `Task`,
 * `ValidationError`, …) becomes `components.schemas.<title>` and every place that uses it a `$ref`.
 *
 * Why titles and not `$id`s: the same schemas validate requests and serialize responses, and Ajv
 * refuses a schema that holds one `$id` twice (a shipment's `origin` and `destination` are both an
 * `Address`); `$ref`s to schemas added with `addSchema` would change what validation runs and what
 * the handlers' types are. A title is an annotation that no validator reads, so the document is
 * the only thing that changes.
 */
type JsonObject = { [key: string]: unknown }

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

const NAME = /^[A-Z][A-Za-z0-9]*$/

const SCHEMA_KEYWORDS = ['type', 'properties', 'anyOf', 'oneOf', 'allOf', 'enum', 'const', 'items', '$ref']
const isSchema = (node: JsonObject) => SCHEMA_KEYWORDS.some((k) => k in node)

/** The schema without its own description: a parameter keeps its description beside the schema, not in it. */
const withoutDescription = ({ description: _, ...rest }: JsonObject) => rest

export const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` })

/**
 * Moves every titled schema under the document's paths into `components.schemas`,
 * innermost first, leaving a `$ref` where it was. Two different schemas under one title are a bug
 * in `schemas/api` and stop the document from being built.
 */
export function hoistNamedSchemas(doc: { paths?: unknown; components?: { schemas?: JsonObject } }): void {
  const components = doc.components ??= {}
  const named: JsonObject = components.schemas ??= {}
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit)
    if (!isObject(node)) return node
    const out = collapseLiterals(Object.fromEntries(Object.entries(node).map(([key, value]) => [key, visit(value)])))
    const name = out.title
    if (typeof name !== 'string' || !NAME.test(name) || !isSchema(out)) return out
    const existing = named[name]
    if (isObject(existing)) {
      if (!isDeepStrictEqual(withoutDescription(existing), withoutDescription(out))) {
        throw new Error(`two different schemas are named ${name}: ${JSON.stringify(existing)} and ${JSON.stringify(out)}`)
      }
      if (existing.description === undefined && out.description !== undefined) named[name] = out
    } else {
      named[name] = out
    }
    return schemaRef(name)
  }
  doc.paths = visit(doc.paths)
  addDiscriminatorMappings(doc, named)
}

/**
 * A set the schema documents but leaves to the command to check (`CheckedEnum`) is its enum here.
 * A union of single literals of one type (TypeBox's `Type.Union([Type.Literal('a'), …])`, which
 * @fastify/swagger writes as `anyOf` of one-value enums) reads as the closed set it is: one `enum`.
 */
function collapseLiterals(node: JsonObject): JsonObject {
  if (Array.isArray(node['x-checked-enum'])) {
    const { 'x-checked-enum': values, ...rest } = node
    return { ...rest, enum: values }
  }
  const { anyOf, ...rest } = node
  if (!Array.isArray(anyOf) || anyOf.length < 2) return node
  const literal = (m: unknown): m is { type: string; enum: [unknown] } => isObject(m) && typeof m.type === 'string'
    && Array.isArray(m.enum) && m.enum.length === 1 && Object.keys(m).every((k) => k === 'type' || k === 'enum')
  if (!anyOf.every(literal) || new Set(anyOf.map((m) => m.type)).size !== 1) return node
  return { ...rest, type: anyOf[0]!.type, enum: anyOf.map((m) => m.enum[0]) }
}

/**
 * A `oneOf` told apart by a property (a blueprint's actions by `do`) gets the mapping from each
 * value to its named branch, so a generator can pick the branch. Ajv takes no mapping, so the
 * schemas that validate say only which property discriminates.
 */
function addDiscriminatorMappings(doc: { paths?: unknown }, named: JsonObject): void {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) { node.forEach(visit); return }
    if (!isObject(node)) return
    const discriminator = node.discriminator
    if (isObject(discriminator) && typeof discriminator.propertyName === 'string' && Array.isArray(node.oneOf)) {
      const property = discriminator.propertyName
      const mapping: Record<string, string> = {}
      for (const branch of node.oneOf) {
        const ref = isObject(branch) && typeof branch.$ref === 'string' ? branch.$ref : undefined
        const target = ref ? named[ref.split('/').pop()!] : undefined
        const tag = isObject(target) && isObject(target.properties) ? target.properties[property] : undefined
        const value = isObject(tag) ? (Array.isArray(tag.enum) && tag.enum.length === 1 ? tag.enum[0] : tag.const) : undefined
        if (ref && typeof value === 'string') mapping[value] = ref
      }
      if (Object.keys(mapping).length === node.oneOf.length) discriminator.mapping = mapping
    }
    for (const value of Object.values(node)) visit(value)
  }
  visit(doc.paths)
  visit(named)
}
