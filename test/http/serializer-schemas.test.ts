// Response serializers get a copy of their schema without the unions fast-json-stringify would
// answer through ajv (src/http/serializer-schemas.ts): the same JSON for every value the schema
// allows, and the schema itself (OpenAPI, validation) untouched.
import { build as serializer } from 'fast-json-stringify'
import t from 'tap'
import { Type } from 'typebox'
import { serializerSchema } from '../../src/http/serializer-schemas.js'
import { build } from '../helpers/build.js'

const Address = Type.Object({ street: Type.String(), floor: Type.Union([Type.String(), Type.Null()]) })
const Schema = Type.Object({
  name: Type.Union([Type.String(), Type.Null()]),
  count: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  status: Type.Union([Type.Literal('pending'), Type.Literal('done')]),
  reason: Type.Union([Type.Literal('no_answer'), Type.Literal('closed'), Type.Null()]),
  address: Type.Union([Address, Type.Null()]),
  tags: Type.Union([Type.Array(Type.String()), Type.Null()]),
  at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  action: Type.Union([Type.Object({ do: Type.Literal('retry'), max: Type.Integer() }), Type.Object({ do: Type.Literal('stop') })]),
})

t.test('unions of "this or null" and of string literals need no ajv; other unions stay', async (t) => {
  const before = JSON.stringify(Schema)
  const copy = serializerSchema(Schema) as any
  t.equal(JSON.stringify(Schema), before, 'the schema itself is not touched')
  t.equal(serializerSchema(Schema), copy, 'one copy per schema object')
  t.match(copy.properties.name, { type: 'string', nullable: true })
  t.notOk('anyOf' in copy.properties.name)
  t.match(copy.properties.count, { type: 'integer', nullable: true })
  t.match(copy.properties.status, { type: 'string' })
  t.notOk('nullable' in copy.properties.status, 'literals without null: not nullable')
  t.match(copy.properties.reason, { type: 'string', nullable: true })
  t.match(copy.properties.address, { type: 'object', nullable: true, properties: { floor: { type: 'string', nullable: true } } })
  t.match(copy.properties.tags, { type: 'array', nullable: true, items: { type: 'string' } })
  t.match(copy.properties.at, { type: 'string', format: 'date-time', nullable: true })
  t.equal(copy.properties.action.anyOf.length, 2, 'a union of objects is left to fast-json-stringify as it is')
})

t.test('the same JSON as from the schema itself, for values it allows', async (t) => {
  const original = serializer(Schema as any)
  const simplified = serializer(serializerSchema(Schema) as any)
  const values = [
    { name: 'a', count: 2, status: 'done', reason: 'closed', address: { street: 'Main', floor: '2' }, tags: ['x'], at: '2026-11-29T10:00:00.000Z', action: { do: 'retry', max: 3 } },
    { name: null, count: null, status: 'pending', reason: null, address: null, tags: null, at: null, action: { do: 'stop' } },
    { name: 'quote " and \\ slash', status: 'done', reason: 'no_answer', address: { street: 'Süd', floor: null, extra: 'dropped' }, tags: [], at: null, action: { do: 'stop' }, secret: 'dropped' },
  ]
  for (const value of values) {
    const text = simplified(value)
    t.equal(text, original(value), `same output: ${text}`)
    t.notOk(text.includes('dropped'), 'undeclared fields still left out')
  }
})

t.test('through the app: nullable fields answered as null and as values', async (t) => {
  const h = await build(t)
  const org = await h.createOrganization({ name: 'Serialized Co' })
  const my = (await h.call('GET', '/api/v1/organizations/my', { token: org.token })).json()
  t.equal(my.organization.name, 'Serialized Co')
  t.equal(my.organization.custom_domain, null, 'a "string or null" field answered null')
})
