import t from 'tap'
import { validate } from '@scalar/openapi-parser'
import { build } from '../../helpers/build.js'

t.test('/health, /ready, /openapi.json and /docs', async (t) => {
  const h = await build(t)

  t.test('/health answers without a token', async (t) => {
    const res = await h.call('GET', '/health')
    t.equal(res.statusCode, 200)
    t.same(res.json(), { status: 'ok' })
  })

  t.test('/ready reports each dependency', async (t) => {
    // A process just started has no figures until its first probes answer (503 "no answer yet"):
    // asked as a load balancer does, until it is ready (a figure slow under load reads degraded).
    let res = await h.call('GET', '/ready')
    for (const started = Date.now(); (res.statusCode !== 200 || res.json().status !== 'ready') && Date.now() - started < 15_000;) {
      await new Promise((r) => setTimeout(r, 200))
      res = await h.call('GET', '/ready')
    }
    t.equal(res.statusCode, 200, res.body)
    const body = res.json()
    t.equal(body.status, 'ready')
    for (const name of ['database', 'event_store', 'projections']) t.equal(body.checks[name]?.status, 'ok', `${name} ok`)
    t.equal(body.checks.database.kind, h.platform.database.kind)
    t.ok(Array.isArray(body.checks.projections.projections))
    t.ok(body.checks.projections.projections.some((p: any) => p.name === 'organizations'))
  })

  t.test('/openapi.json is a valid OpenAPI 3 document with the organization endpoints', async (t) => {
    const res = await h.call('GET', '/openapi.json')
    t.equal(res.statusCode, 200)
    const doc = res.json()
    t.match(doc.openapi, /^3\./)
    const { valid, errors } = await validate(structuredClone(doc))
    t.ok(valid, `valid OpenAPI: ${JSON.stringify(errors)}`)
    const paths = doc.paths as Record<string, any>
    for (const p of ['/api/v1/organizations/my', '/api/v1/organizations/my/places', '/api/v1/organizations/my/contracts', '/admin/v1/organizations', '/admin/v1/organizations/{org_id}/tokens', '/admin/v1/tokens/{token_id}', '/admin/v1/contracts']) {
      t.ok(paths[p], `documents ${p}`)
    }
    // Named schemas are `$ref`s to components (src/http/openapi/components.ts).
    const deref = (schema: any): any => (schema?.$ref ? deref(schema.$ref.slice(2).split('/').reduce((n: any, k: string) => n[k], doc)) : schema)
    const my = paths['/api/v1/organizations/my'].get
    t.ok(my.summary && my.tags?.includes('Organizations'))
    const org = deref(deref(my.responses['200'].content['application/json'].schema).properties.organization)
    t.same(org.required.sort(), ['carriers_enabled', 'currency', 'custom_domain', 'default_service_type', 'id', 'locale', 'market', 'name', 'operational_address_id', 'roles', 'subdomain', 'suspended_at', 'timezone', 'visual_settings'].sort())
    t.ok(my.responses['401'], 'error responses documented')
    const create = paths['/api/v1/organizations/my/places'].post
    const body = deref(create.requestBody.content['application/json'].schema)
    t.equal(body.additionalProperties, false)
    t.ok(body.required.includes('name') && body.properties.street_number.maxLength === 10, 'the body schema is the validating one')
    const contracts = paths['/api/v1/organizations/my/contracts'].get
    t.same(contracts.parameters.map((p: any) => p.name).sort(), ['cursor', 'filter[global]', 'license', 'page', 'perPage', 'sort'])
    t.ok(doc.components.securitySchemes.organizationToken)
    t.notOk(paths['/health'] || paths['/openapi.json'], 'infrastructure routes are hidden')
  })

  t.test('/docs serves the API reference page', async (t) => {
    const first = await h.call('GET', '/docs')
    t.ok([200, 301, 302].includes(first.statusCode))
    const res = first.statusCode === 200 ? first : await h.call('GET', first.headers.location as string)
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /text\/html/)
    t.match(res.body, /<html/i)
    t.match(res.body, /openapi\.json/, 'the page loads the generated document')
    const script = /<script src="([^"]+)"/.exec(res.body)?.[1]
    t.ok(script)
    const asset = await h.call('GET', new URL(script!, 'http://x/docs/').pathname)
    t.equal(asset.statusCode, 200, 'its script is served')
  })
})
