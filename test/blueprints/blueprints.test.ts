import t from 'tap'
import { build } from '../helpers/build.js'

const steps = [
  { key: 'pickup', name: 'Pickup', task: { type: 'pickup', address: 'origin', time_window: 'pickup_window' }, on_complete: [{ do: 'create_task', step: 'delivery' }] },
  { key: 'delivery', name: 'Delivery', task: { type: 'delivery', address: 'destination' }, depends_on: ['pickup'],
    on_complete: [{ do: 'emit_event', event: 'delivered' }, { do: 'complete_workflow' }], on_fail: [{ do: 'retry', max_attempts: 2 }, { do: 'fail_workflow' }] },
]

t.test('blueprints: drafts, publication, versions, defaults', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ roles: ['carrier'] })
  const other = await h.createOrganization({ roles: ['carrier'] })
  const call = (method: string, url: string, body?: object, token = carrier.token) => h.call(method, `/api/v1${url}`, { token, body })

  t.test('every organization has the two default blueprints, published, already before it made any', async (t) => {
    const list = await call('GET', '/blueprints')
    t.equal(list.statusCode, 200, list.body)
    // (the parent goes on creating blueprints meanwhile: only the defaults are looked at)
    t.same(list.json().data.filter((b: any) => b.default).map((b: any) => [b.key, b.status, b.version]).sort(), [['delivery', 'published', 1], ['pickup-delivery', 'published', 1]])
    const byKey = await call('GET', '/blueprints/pickup-delivery')
    t.equal(byKey.statusCode, 200)
    t.same(byKey.json().start_steps, ['pickup'])
    t.match(byKey.json().steps[0].on_complete, [{ do: 'set_shipment_status', status: 'picked_up' }, { do: 'create_task', step: 'delivery' }])
    const rows = await h.platform.rm.selectFrom('blueprints').select(['key', 'organization_id']).where('organization_id', '=', carrier.id).where('is_default', '=', true).execute()
    t.equal(rows.length, 2, 'the defaults are rows of the read model, for analysts too')
    await Promise.all([call('GET', '/blueprints'), call('GET', '/blueprints/delivery', undefined, other.token), call('GET', '/blueprints', undefined, other.token)])
    const defaults = await h.platform.rm.selectFrom('blueprints').select('key').where('is_default', '=', true).where('organization_id', 'in', [carrier.id, other.id]).execute()
    t.equal(defaults.length, 4, 'made once per organization, however often and however concurrently asked')
  })

  const made = await call('POST', '/blueprints', { key: 'two-legs', name: 'Two legs', steps, start_steps: ['pickup'] })
  t.equal(made.statusCode, 201, made.body)
  const bp = made.json().blueprint

  t.test('created: version 1, a draft', async (t) => {
    t.match(bp, { key: 'two-legs', name: 'Two legs', version: 1, status: 'draft', published_version: null, default: false, published_at: null })
    t.ok(Number.isInteger(bp.id), 'blueprints are addressed by integer (DESIGN §3.4)')
    t.equal((await call('GET', `/blueprints/${bp.id}`)).json().key, 'two-legs', 'by id as by key')
    const dup = await call('POST', '/blueprints', { key: 'two-legs', name: 'Again', steps, start_steps: ['pickup'] })
    t.equal(dup.statusCode, 422)
    t.ok(dup.json().errors.key, 'the key is taken')
    t.equal((await call('POST', '/blueprints', { key: 'two-legs', name: 'Theirs', steps, start_steps: ['pickup'] }, other.token)).statusCode, 201, 'another organization may use the key')
  })

  t.test('two creations of one key at once: one blueprint, the other a 422', async (t) => {
    const both = await Promise.all([1, 2].map((n) => call('POST', '/blueprints', { key: 'raced', name: `Raced ${n}`, steps, start_steps: ['pickup'] })))
    t.same(both.map((r) => r.statusCode).sort(), [201, 422])
    t.equal((await h.platform.rm.selectFrom('blueprints').select('id').where('key', '=', 'raced').where('organization_id', '=', carrier.id).execute()).length, 1)
  })

  t.test('422 on the shape names every failing field at once', async (t) => {
    const res = await call('POST', '/blueprints', { key: 'Bad Key', name: '', steps: [{ key: 'a', name: 'A', task: { type: 'teleport', address: 'origin' }, on_fail: [{ do: 'explode' }] }], start_steps: [] })
    t.equal(res.statusCode, 422, res.body)
    const errors = res.json().errors
    for (const k of ['key', 'name', 'steps.0.task.type', 'start_steps']) t.ok(errors[k], `names ${k}: ${JSON.stringify(errors)}`)
    t.ok(errors['steps.0.on_fail.0.do'], 'names the unknown action by its do')
    const missing = await call('POST', '/blueprints', { key: 'k', name: 'K', steps: [{ ...steps[0], on_complete: [{ do: 'create_task' }, { do: 'retry', max_attempts: 0 }] }], start_steps: ['pickup'] })
    t.same(Object.keys(missing.json().errors).sort(), ['steps.0.on_complete.0.step', 'steps.0.on_complete.1.max_attempts'], 'each action against its own branch only')
  })

  t.test('publishing checks the draft and names each problem by its path', async (t) => {
    const broken = [
      steps[0],
      { ...steps[1], on_fail: [{ do: 'retry' }, { do: 'create_task', step: 'nowhere' }, { do: 'start_workflow', blueprint_key: 'unknown' }] },
      { key: 'orphan', name: 'Orphan', task: { type: 'service', address: 'destination' } },
    ]
    t.equal((await call('PUT', `/blueprints/${bp.id}`, { name: 'Two legs', steps: broken, start_steps: ['pickup'] })).statusCode, 200)
    const res = await call('POST', `/blueprints/${bp.id}/publish`)
    t.equal(res.statusCode, 422, res.body)
    t.same(Object.keys(res.json().errors).sort(), ['steps.1.on_fail.0.max_attempts', 'steps.1.on_fail.1.step', 'steps.1.on_fail.2.blueprint_key', 'steps.2'])
    t.equal((await call('GET', `/blueprints/${bp.id}`)).json().status, 'draft', 'nothing was published')
  })

  t.test('publish, then PUT drafts version 2; version 1 never changes', async (t) => {
    t.equal((await call('PUT', `/blueprints/${bp.id}`, { name: 'Two legs', steps, start_steps: ['pickup'] })).statusCode, 200)
    const pub = await call('POST', `/blueprints/${bp.id}/publish`)
    t.equal(pub.statusCode, 200, pub.body)
    t.match(pub.json().blueprint, { version: 1, status: 'published', published_version: 1, published_at: String })
    const twice = await call('POST', `/blueprints/${bp.id}/publish`)
    t.equal(twice.statusCode, 409)
    t.equal(twice.json().code, 'blueprint_published')
    const v2 = await call('PUT', `/blueprints/${bp.id}`, { name: 'Two legs, v2', steps: [steps[0], { ...steps[1], task: { ...steps[1]!.task, duration_minutes: 5 } }], start_steps: ['pickup'] })
    t.equal(v2.statusCode, 200)
    t.match(v2.json().blueprint, { version: 2, status: 'draft', published_version: 1, name: 'Two legs, v2' })
    const v1 = (await call('GET', `/blueprints/${bp.id}?version=1`)).json()
    t.match(v1, { version: 1, status: 'published', name: 'Two legs' })
    t.same(v1.steps, steps)
    t.equal((await call('GET', `/blueprints/${bp.id}?version=3`)).statusCode, 404)
    const events = await h.platform.store.readStream(`blueprint-${bp.id}`)
    t.same(events.map((e) => e.type), ['BlueprintCreated', 'BlueprintDrafted', 'BlueprintDrafted', 'BlueprintPublished', 'BlueprintDrafted'])
  })

  t.test('listing filters; another organization\'s blueprint is unknown', async (t) => {
    const drafts = (await call('GET', '/blueprints?status=draft')).json()
    t.same(drafts.data.map((b: any) => b.key), ['two-legs', 'raced'])
    t.equal((await call('GET', `/blueprints/${bp.id}`, undefined, other.token)).statusCode, 404)
    t.equal((await call('PUT', `/blueprints/${bp.id}`, { name: 'x', steps, start_steps: ['pickup'] }, other.token)).statusCode, 404)
    t.equal((await call('POST', `/blueprints/${bp.id}/publish`, undefined, other.token)).statusCode, 404)
  })
})
