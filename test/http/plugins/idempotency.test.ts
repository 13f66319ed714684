import t from 'tap'
import { build } from '../../helpers/build.js'

t.test('Idempotency-Key on POST', async (t) => {
  const h = await build(t)
  const org = await h.createOrganization({ roles: ['shipper'] })
  const other = await h.createOrganization({ roles: ['shipper'] })
  const place = (name: string) => ({ name, street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR' })
  const post = (key: string | undefined, body: unknown, token = org.token) =>
    h.call('POST', '/api/v1/organizations/my/places', { token, body, headers: key === undefined ? {} : { 'idempotency-key': key } })
  const events = async () => Number((await h.platform.db.selectFrom('es_events' as any).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow() as any).n)
  const placeNames = async (token = org.token) => ((await h.call('GET', '/api/v1/organizations/my/places', { token })).json().places as any[]).map((p) => p.name)

  t.test('same key and body: the first response again, nothing appended twice', async (t) => {
    const first = await post('key-1', place('Depot'))
    t.equal(first.statusCode, 201, first.body)
    const after = await events()
    // The same body with its keys in another order is the same request.
    const reordered = Object.fromEntries(Object.entries(place('Depot')).reverse())
    const again = await post('key-1', reordered)
    t.equal(again.statusCode, 201)
    t.same(again.json(), first.json(), 'the same place, same id')
    t.equal(again.headers['idempotent-replayed'], 'true')
    t.equal(await events(), after, 'no event appended by the replay')
    t.same(await placeNames(), ['Depot'])
  })

  t.test('same key, another body: 422 on idempotency_key', async (t) => {
    const before = await events()
    const res = await post('key-1', place('Warehouse'))
    t.equal(res.statusCode, 422)
    t.ok(res.json().errors.idempotency_key)
    t.equal(await events(), before)
  })

  t.test('concurrent duplicates: exactly one executes', async (t) => {
    const before = await events()
    const all = await Promise.all(Array.from({ length: 6 }, () => post('key-concurrent', place('Hub'))))
    const codes = all.map((r) => r.statusCode)
    t.ok(codes.every((c) => c === 201 || c === 409), `201 or 409 (in progress): ${codes}`)
    const executed = all.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] !== 'true')
    t.equal(executed.length, 1, 'one request ran the handler')
    for (const r of all.filter((x) => x.statusCode === 409)) t.equal(r.json().code, 'idempotency_in_progress')
    t.equal(await events(), before + 1, 'one PlaceAdded')
    t.same((await placeNames()).filter((n) => n === 'Hub'), ['Hub'])
    const later = await post('key-concurrent', place('Hub'))
    t.same(later.json(), executed[0]!.json(), 'afterwards every retry gets the first response')
  })

  t.test('keys are per principal', async (t) => {
    const res = await post('key-1', place('Depot'), other.token)
    t.equal(res.statusCode, 201)
    t.not(res.headers['idempotent-replayed'], 'true')
    t.same(await placeNames(other.token), ['Depot'])
  })

  t.test('a request refused by validation claims nothing', async (t) => {
    const bad = await post('key-2', { name: 'x' })
    t.equal(bad.statusCode, 422)
    t.notOk(bad.json().errors.idempotency_key)
    const fixed = await post('key-2', place('Fixed'))
    t.equal(fixed.statusCode, 201)
  })

  t.test('in-progress claims: 409, and taken over once abandoned', async (t) => {
    const scope = `org:${org.id}`
    const hashOf = async (key: string) => {
      // Claim through a real request, then make it look unfinished.
      await post(key, place(key))
      await h.platform.db.updateTable('idempotency_keys').set({ status_code: 0, response_body: '' }).where('scope', '=', scope).where('key', '=', key).execute()
    }
    await hashOf('key-busy')
    const busy = await post('key-busy', place('key-busy'))
    t.equal(busy.statusCode, 409)
    t.equal(busy.json().code, 'idempotency_in_progress')

    await hashOf('key-dead')
    await h.platform.db.updateTable('idempotency_keys').set({ created_at: new Date(Date.now() - 10 * 60_000) }).where('scope', '=', scope).where('key', '=', 'key-dead').execute()
    const before = await events()
    const retried = await post('key-dead', place('key-dead'))
    t.equal(retried.statusCode, 201, 'a claim left by a dead process is taken over')
    t.equal(await events(), before + 1)
  })

  t.test('the key must be 1 to 255 characters', async (t) => {
    const res = await post('k'.repeat(256), place('Long'))
    t.equal(res.statusCode, 422)
    t.ok(res.json().errors.idempotency_key)
  })

  t.test('without a key, every POST executes', async (t) => {
    const before = await events()
    await post(undefined, place('Twice'))
    await post(undefined, place('Twice'))
    t.equal(await events(), before + 2)
  })
})
