import t from 'tap'
import { hoistNamedSchemas } from '../../src/http/openapi/components.js'

// The document's named schemas (src/http/openapi/components.ts), on small documents.
const body = (schema: unknown) => ({ requestBody: { content: { 'application/json': { schema } } } })

t.test('a titled schema becomes one component, used by $ref wherever it appears', async (t) => {
  const address = { title: 'Address', type: 'object', properties: { street: { type: 'string' } } }
  const doc: any = { paths: { '/a': { post: body({ type: 'object', properties: { from: address, to: { anyOf: [{ ...address }, { type: 'null' }] } } }) } } }
  hoistNamedSchemas(doc)
  t.same(doc.components.schemas, { Address: address })
  t.same(doc.paths['/a'].post.requestBody.content['application/json'].schema.properties, {
    from: { $ref: '#/components/schemas/Address' }, to: { anyOf: [{ $ref: '#/components/schemas/Address' }, { type: 'null' }] },
  })
})

t.test('nested names are hoisted innermost first; a description at the place of use is no difference', async (t) => {
  const status = { title: 'Status', type: 'string', enum: ['a', 'b'] }
  const doc: any = { paths: { '/a': { get: { parameters: [{ in: 'query', name: 's', schema: { ...status } }] }, post: body({ title: 'Thing', type: 'object', properties: { s: { ...status, description: 'the status' } } }) } } }
  hoistNamedSchemas(doc)
  t.same(doc.components.schemas.Thing.properties.s, { $ref: '#/components/schemas/Status' })
  t.equal(doc.components.schemas.Status.description, 'the status', 'the fuller one is kept')
  t.same(doc.paths['/a'].get.parameters[0].schema, { $ref: '#/components/schemas/Status' })
})

t.test('two different schemas under one title stop the document', async (t) => {
  const doc: any = { paths: { '/a': { post: body({ type: 'object', properties: { x: { title: 'X', type: 'string' }, y: { title: 'X', type: 'integer' } } }) } } }
  t.throws(() => hoistNamedSchemas(doc), /two different schemas are named X/)
})

t.test('unions of literals and checked sets read as enums; a discriminator gets its mapping', async (t) => {
  const branch = (tag: string) => ({ title: `${tag[0]!.toUpperCase()}${tag.slice(1)}Action`, type: 'object', properties: { do: { type: 'string', enum: [tag] } } })
  const doc: any = {
    paths: {
      '/a': {
        post: body({
          type: 'object',
          properties: {
            kind: { anyOf: [{ type: 'string', enum: ['x'] }, { type: 'string', enum: ['y'] }], default: 'x' },
            status: { type: 'string', maxLength: 50, 'x-checked-enum': ['received', 'delivered'] },
            action: { type: 'object', discriminator: { propertyName: 'do' }, oneOf: [branch('create'), branch('retry')] },
          },
        }),
      },
    },
  }
  hoistNamedSchemas(doc)
  const { properties } = doc.paths['/a'].post.requestBody.content['application/json'].schema
  t.same(properties.kind, { default: 'x', type: 'string', enum: ['x', 'y'] })
  t.same(properties.status, { type: 'string', maxLength: 50, enum: ['received', 'delivered'] })
  t.same(properties.action.discriminator.mapping, { create: '#/components/schemas/CreateAction', retry: '#/components/schemas/RetryAction' })
})
