import t from 'tap'
import { PartiesCache } from '../../src/shipments/parties-cache.js'
import { type ChangeNotice, encodeChangeNotice } from '../../projections/change-notices.js'
import { ReadModelChanges } from '../../projections/read-model-changes.js'
import { SHIPMENT_ROWS, STATUS_CATALOGS } from '../../projections/shipments/shipments-projection.js'
import { build } from '../helpers/build.js'

const change = (batch: string, ids: number[], organizations: string[] = []): ChangeNotice =>
  ({ batch, keys: { [SHIPMENT_ROWS]: ids, [STATUS_CATALOGS]: organizations }, whole: [], everything: false })

async function following() {
  const cache = new PartiesCache()
  const changes = new ReadModelChanges(undefined)
  await changes.subscribe(cache.subscriber)
  return Object.assign(cache, {
    announced: (n: ChangeNotice) => changes.announce(n),
    notified: (n: ChangeNotice | string) => changes.received(typeof n === 'string' ? n : encodeChangeNotice(n)),
    close: () => changes.close(),
  })
}
const ref = (id: string) => ({ id, internal_id: 1, name: id, subdomain: id })
const renamed = (name: string) => new Map([['pending', { name, color: null }]])

t.test('counterparts are kept per (caller, side, counterpart) until the TTL', async (t) => {
  let now = 0
  const c = new PartiesCache({ ttlMs: 1_000, now: () => now })
  c.setCounterpart('org_a|shipper|org_c', ref('org_c'))
  t.same(c.counterpart('org_a|shipper|org_c'), ref('org_c'))
  t.equal(c.counterpart('org_b|shipper|org_c'), undefined, 'another caller does not get it')
  now = 1_000
  t.equal(c.counterpart('org_a|shipper|org_c'), undefined, 'expired')
})

t.test('a catalog is dropped by a notice naming its organization, and only then', async (t) => {
  const c = await following()
  c.setCatalog('org_a', renamed('A'), c.begin())
  c.setCatalog('org_b', renamed('B'), c.begin())
  c.notified(change('x.1', [1, 2, 3]))
  t.ok(c.catalog('org_a'), 'a batch of shipment rows changes no catalog')
  c.notified(change('x.2', [], ['org_a']))
  t.equal(c.catalog('org_a'), undefined)
  t.same(c.catalog('org_b'), renamed('B'))
  c.notified('')
  t.equal(c.catalog('org_b'), undefined, '"everything" clears')
})

t.test('an announced rename is neither served nor filled until its notice; a lookup that started before it does not fill', async (t) => {
  const c = await following()
  t.teardown(() => c.close())
  c.setCatalog('org_a', renamed('old'), c.begin())
  const before = c.begin()
  c.announced(change('p.1', [], ['org_a']))
  t.equal(c.catalog('org_a'), undefined, 'not served while the batch is unsettled')
  c.setCatalog('org_a', renamed('read half-way'), c.begin())
  t.equal(c.catalog('org_a'), undefined, 'not filled while unsettled')
  c.notified(change('p.1', [], ['org_a']))
  c.setCatalog('org_a', renamed('stale'), before)
  t.equal(c.catalog('org_a'), undefined, 'a lookup from before the invalidation does not fill')
  c.setCatalog('org_a', renamed('new'), c.begin())
  t.same(c.catalog('org_a'), renamed('new'))
})

t.test('POST /shipments from a known pair follows renames and new contracts at once', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ roles: ['carrier'] })
  const other = await h.createOrganization({ roles: ['carrier'] })
  const shipper = await h.createOrganization({ roles: ['shipper'] })
  await h.signContract(carrier.id, shipper.id)
  const address = (over: Record<string, unknown> = {}) => ({ name: 'Ana', street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR', ...over })
  const create = (carrierId: string) => h.call('POST', '/api/v1/shipments', {
    token: shipper.token,
    body: { carrier_id: carrierId, origin: address(), destination: address({ city: 'Rosario', state: 'Santa Fe' }), packages: [{ grams: 500, length: 10, width: 10, height: 10 }] },
  })
  for (let i = 0; i < 2; i++) {
    const res = await create(carrier.id)
    t.equal(res.statusCode, 201, res.body)
    t.equal(res.json().shipment.status.name, 'Pending')
    t.equal(res.json().shipment.carrier.id, carrier.internalId)
  }
  const patch = await h.call('PATCH', '/api/v1/shipment-statuses/pending', { token: shipper.token, body: { name: 'Esperando', color: '#123456' } })
  t.equal(patch.statusCode, 200, patch.body)
  const after = await create(carrier.id)
  t.equal(after.statusCode, 201, after.body)
  t.match(after.json().shipment.status, { name: 'Esperando', color: '#123456' }, 'the rename shows in the very next creation')

  const refused = await create(other.id)
  t.equal(refused.statusCode, 422)
  t.ok(refused.json().errors?.carrier_id, refused.body)
  await h.signContract(other.id, shipper.id)
  const accepted = await create(other.id)
  t.equal(accepted.statusCode, 201, 'a refusal is not remembered: the new contract works at once')
  t.equal(accepted.json().shipment.carrier.id, other.internalId)
})
