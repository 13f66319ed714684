// Route schemas are compiled on first use (src/http/lazy-compile.ts): a route's own on its first
// request, and every route's schemas compile (a schema ajv or fast-json-stringify refuses would
// otherwise show only on that route's first request).
import t from 'tap'
import { build } from '../helpers/build.js'
import { compileAll } from '../../src/http/lazy-compile.js'

t.test('validators and serializers compile on first use, and all of them compile', async (t) => {
  const h = await build(t)
  const bad = await h.admin('POST', '/organizations', { name: 5, subdomain: 'Not A Subdomain', roles: ['pilot'] })
  t.equal(bad.statusCode, 422, 'a body is checked by its validator, compiled on its first use')
  t.match(JSON.parse(bad.body).errors, { name: Array, subdomain: Array, 'roles.0': Array }, `every failing field named: ${bad.body}`)
  const org = await h.createOrganization({ name: 'Lazy Co' })
  const my = await h.call('GET', '/api/v1/organizations/my', { token: org.token })
  t.equal(my.statusCode, 200)
  t.equal(my.json().organization.name, 'Lazy Co', 'an answer serialized by its serializer, compiled on its first use')
  t.notOk('internal' in my.json().organization, 'the serializer keeps to its schema')
  const started = performance.now()
  const compiled = compileAll()
  t.ok(compiled > 100, `every remaining route schema compiled: ${compiled} in ${(performance.now() - started).toFixed(0)} ms`)
  t.equal(compileAll(), 0, 'none left after')
})
