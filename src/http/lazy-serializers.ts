import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'
import { compiledOnFirstUse } from './lazy-compile.js'
import { serializerSchema } from './serializer-schemas.js'

type BuildSerializer = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>

/**
 * Fastify's own response serializers (fast-json-stringify), each compiled on its route's first
 * answer (lazy-compile.ts), from the copy of its schema that needs no ajv (serializer-schemas.ts).
 */
export const lazySerializers: BuildSerializer = (externalSchemas, options) => {
  const compile = SerializerSelector()(serializerSchema(externalSchemas), options)
  return (route) => compiledOnFirstUse(() => compile({ ...route, schema: serializerSchema(route.schema) }))
}
