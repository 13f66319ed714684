import t from 'tap'
import fc from 'fast-check'
import { sql } from 'kysely'
import { build } from '../helpers/build.js'
import { uploadRoutes } from './fixtures/upload-routes.js'

const address = (over: Record<string, unknown> = {}) => ({
  name: 'Ana', street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR', ...over,
})
const pkg = (over: Record<string, unknown> = {}) => ({ grams: 1000, length: 10, width: 10, height: 10, ...over })

t.test('bad input to POST /shipments', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ roles: ['carrier'], currency: 'ARS' })
  const shipper = await h.createOrganization({ roles: ['shipper'], currency: 'ARS' })
  const other = await h.createOrganization({ roles: ['shipper'] })
  await h.signContract(carrier.id, shipper.id)
  const create = (body: unknown, token = shipper.token) => h.call('POST', '/api/v1/shipments', { token, body: body as any })
  const eventCount = async () => Number((await sql<{ n: string }>`select count(*) as n from es_events`.execute(h.platform.db)).rows[0]!.n)

  t.test('every bound crossed at once: 422 naming every dot path', async (t) => {
    const before = await eventCount()
    const res = await create({
      carrier_id: carrier.id,
      external_reference: 'x'.repeat(51),
      declared_value: -1,
      declared_value_currency: 'ZZZ',
      merchant: { name: 'm'.repeat(101), code: 'c' },
      promised_delivery_at: 'tomorrow',
      origin: address({
        name: 'n'.repeat(101), street: 's'.repeat(101), street_number: '1'.repeat(11), floor: 'f'.repeat(6),
        apartment: 'a'.repeat(11), reference: 'r'.repeat(256), email: 'not-an-email', phone: 'call me',
        geo_latitude: 90.5, geo_longitude: -180.5, document_type: 'DNI',
      }),
      destination: { id: 'adr_x', place_id: 'ple_y' },
      packages: [
        pkg({ grams: 0, length: 0, external_reference: 'e'.repeat(51), description: 'd'.repeat(191), label_code: 'L'.repeat(21), declared_value_amount: -1, declared_value_currency: 'ZZZ' }),
        pkg({ height: undefined, grams: undefined, original_weight: 3, weight_unit: 'stone', original_temperature_min: -500, temperature_min_unit: 'F' }),
        pkg({ label_code: 'código', width: 10.5, original_length: 5 }),
      ],
    })
    t.equal(res.statusCode, 422, res.body)
    const errors = res.json().errors
    const expected = [
      'external_reference', 'declared_value', 'merchant.name', 'promised_delivery_at',
      'origin.name', 'origin.street', 'origin.street_number', 'origin.floor', 'origin.apartment', 'origin.reference',
      'origin.email', 'origin.geo_latitude', 'origin.geo_longitude', 'origin.document_number',
      'destination.id', 'destination.place_id',
      'packages.0.grams', 'packages.0.length', 'packages.0.external_reference', 'packages.0.description', 'packages.0.label_code',
      'packages.0.declared_value_amount',
      'packages.1.height', 'packages.1.weight_unit', 'packages.1.original_temperature_min',
      'packages.2.label_code', 'packages.2.width', 'packages.2.length_unit',
    ]
    for (const k of expected) t.ok(errors[k], `names ${k}`)
    t.equal(await eventCount(), before, 'nothing was written')
  })

  t.test('bounds one by one', async (t) => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['no packages', { packages: [] }, 'packages'],
      ['101 packages', { packages: Array.from({ length: 101 }, () => pkg()) }, 'packages'],
      ['unknown currency', { declared_value_currency: 'ZZZ' }, 'declared_value_currency'],
      ['currency longer than 4', { declared_value_currency: 'DOLLARS' }, 'declared_value_currency'],
      ['package currency', { packages: [pkg({ declared_value_currency: 'QQQ' })] }, 'packages.0.declared_value_currency'],
      ['3-letter country', { origin: address({ country: 'ARG' }) }, 'origin.country'],
      ['unknown country', { origin: address({ country: 'QQ' }) }, 'origin.country'],
      ['invalid phone', { destination: address({ phone: '12' }) }, 'destination.phone'],
      ['no city nor city_id', { destination: address({ city: undefined }) }, 'destination.city'],
      ['unknown city_id', { destination: { name: 'a', street: 'b', street_number: '1', city_id: 999999999 } }, 'destination.city_id'],
      ['missing street', { destination: address({ street: undefined }) }, 'destination.street'],
      ['place_id of another org', { origin: { place_id: 'ple_doesnotexist' } }, 'origin.place_id'],
      ['id with other fields', { origin: { id: 'adr_x', name: 'x' } }, 'origin.name'],
      ['unknown address id', { origin: { id: 'adr_nope' } }, 'origin.id'],
      ['unknown package id', { packages: [{ id: 987654321 }] }, 'packages.0.id'],
      ['original weight without unit', { packages: [pkg({ grams: undefined, original_weight: 2 })] }, 'packages.0.weight_unit'],
      ['weight unit without value', { packages: [pkg({ grams: undefined, weight_unit: 'kg' })] }, 'packages.0.original_weight'],
      ['grams that disagree', { packages: [pkg({ grams: 5, original_weight: 1, weight_unit: 'kg' })] }, 'packages.0.grams'],
      ['temperature min above max', { packages: [pkg({ temperature_min: 10, temperature_max: 2 })] }, 'packages.0.temperature_max'],
      ['string for an integer', { packages: [pkg({ grams: '5' })] }, 'packages.0.grams'],
      ['unknown field', { colour: 'red' }, 'colour'],
      ['a weight too large once converted', { packages: [pkg({ grams: undefined, original_weight: 30000, weight_unit: 'lbs' })] }, 'packages.0.original_weight'],
    ]
    for (const [name, over, path] of cases) {
      const res = await create({ carrier_id: carrier.id, origin: address(), destination: address(), packages: [pkg()], ...over })
      t.equal(res.statusCode, 422, `${name}: ${res.body}`)
      t.ok(res.json().errors?.[path], `${name} names ${path}`)
    }
    const ok = await create({ carrier_id: carrier.id, origin: address(), destination: address(), packages: [pkg({ label_code: 'L'.repeat(20), external_reference: 'e'.repeat(50), description: 'd'.repeat(190) })], external_reference: 'x'.repeat(50) })
    t.equal(ok.statusCode, 201, `exactly at the bounds is fine: ${ok.body}`)
  })

  t.test('keys named like Object.prototype members are unknown fields, not a 500', async (t) => {
    for (const key of ['valueOf', 'constructor', 'toString', 'hasOwnProperty']) {
      const res = await h.call('POST', '/api/v1/shipments', { token: shipper.token, body: `{"${key}": 0}`, headers: { 'content-type': 'application/json' } })
      t.equal(res.statusCode, 422, `${key}: ${res.body}`)
      t.ok(res.json().errors[key])
    }
    const cancel = await h.call('POST', '/api/v1/shipments/1/cancel', { token: shipper.token, body: '{"constructor": 1}', headers: { 'content-type': 'application/json' } })
    t.equal(cancel.statusCode, 422)
  })

  t.test('tolerant unit spellings map to canonical units', async (t) => {
    const res = await create({
      carrier_id: carrier.id, origin: address(), destination: address(),
      packages: [
        pkg({ grams: undefined, original_weight: 1, weight_unit: 'Kg.', original_height: 1, height_unit: 'M', height: undefined }),
        pkg({ grams: undefined, original_weight: 2, weight_unit: 'pounds', original_width: 4, width_unit: '"', width: undefined, original_temperature_max: 5, temperature_max_unit: '°C' }),
        pkg({ grams: undefined, original_weight: 500, weight_unit: 'MG' }),
      ],
    })
    t.equal(res.statusCode, 201, res.body)
    const [a, b, c] = res.json().shipment.packages
    t.same(a.weight, { value: 1000, original_value: 1, unit: 'kg' })
    t.same(a.height, { value: 100, original_value: 1, unit: 'm' })
    t.same(b.weight, { value: 907, original_value: 2, unit: 'lbs' })
    t.same(b.width, { value: 11, original_value: 4, unit: 'in' })
    t.same(b.temperature_max, { value: 5, original_value: 5, unit: 'celsius' })
    t.same(c.weight, { value: 1, original_value: 500, unit: 'mg' })
  })

  t.test('roles and parties', async (t) => {
    const asCarrierWithoutShipper = await create({ origin: address(), destination: address(), packages: [pkg()] }, carrier.token)
    t.ok(asCarrierWithoutShipper.json().errors?.shipper_id)
    const noContract = await create({ carrier_id: carrier.id, origin: address(), destination: address(), packages: [pkg()] }, other.token)
    t.ok(noContract.json().errors?.carrier_id)
    const unknown = await create({ carrier_id: 'org_nope', origin: address(), destination: address(), packages: [pkg()] })
    t.ok(unknown.json().errors?.carrier_id)
  })

  t.test('property: random bodies never give a 500 and never write half a shipment', async (t) => {
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string(), fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 8 }), tie('value'), { maxKeys: 4 })),
    })).value
    const addressArb = fc.oneof(
      fc.record({ name: fc.string({ maxLength: 110 }), street: fc.string({ maxLength: 110 }), street_number: fc.string({ maxLength: 12 }), city: fc.constantFrom('Córdoba', 'Rosario', '', 'Nowhere'), country: fc.constantFrom('AR', 'ar', 'XX', 'ARG'), phone: fc.option(fc.string({ maxLength: 20 })), geo_latitude: fc.option(fc.double({ min: -100, max: 100, noNaN: true })) }, { requiredKeys: [] }),
      fc.record({ id: fc.string({ maxLength: 30 }) }),
      fc.record({ place_id: fc.string({ maxLength: 30 }) }),
      json,
    )
    const packageArb = fc.oneof(
      fc.record({
        grams: fc.option(fc.integer({ min: -5, max: 20_000_000 })), length: fc.option(fc.integer({ min: -1, max: 20_000 })), width: fc.integer({ min: 0, max: 100 }), height: fc.integer({ min: 0, max: 100 }),
        original_weight: fc.option(fc.double({ noNaN: false })), weight_unit: fc.option(fc.constantFrom('kg', 'KG', 'lbs', 'stone', '', 'g')),
        original_temperature_min: fc.option(fc.double()), temperature_min_unit: fc.option(fc.constantFrom('F', '°C', 'kelvin')),
        label_code: fc.option(fc.string({ maxLength: 25 })), declared_value_currency: fc.option(fc.constantFrom('USD', 'usd', 'ZZZ', 'EURO')),
      }, { requiredKeys: [] }),
      json,
    )
    const body = fc.oneof(
      fc.record({
        carrier_id: fc.constantFrom(carrier.id, shipper.id, 'org_x', null),
        shipper_id: fc.option(fc.constantFrom(shipper.id, 'org_y')),
        origin: addressArb, destination: addressArb,
        packages: fc.oneof(fc.array(packageArb, { maxLength: 3 }), json),
        declared_value: fc.option(fc.double()), external_reference: fc.option(fc.string({ maxLength: 60 })),
        promised_delivery_at: fc.option(fc.oneof(fc.string(), fc.date({ noInvalidDate: true }).map((d) => d.toISOString()))),
      }, { requiredKeys: [] }),
      json,
    )
    let created = 0
    await fc.assert(fc.asyncProperty(body, async (b) => {
      const before = await eventCount()
      const res = await create(b)
      if (res.statusCode >= 500) throw new Error(`500 for ${JSON.stringify(b)}: ${res.body}`)
      const after = await eventCount()
      if (res.statusCode === 201) {
        created++
        // The control-number reservation and ShipmentCreated: both or neither.
        if (after - before !== 2) throw new Error(`expected 2 events, got ${after - before}`)
        const id = res.json().shipment.id
        const row = await h.platform.rm.selectFrom('shipments').select('id').where('id', '=', id).executeTakeFirst()
        if (!row) throw new Error('created but not projected')
      } else if (after !== before) {
        throw new Error(`a ${res.statusCode} wrote ${after - before} events for ${JSON.stringify(b)}`)
      }
    }), { numRuns: Number(process.env.SHIPMENT_PROPERTY_RUNS ?? 150) })
    t.pass(`random bodies, ${created} valid`)
  })
})

t.test('property: malformed multipart bodies on the upload routes are 4xx JSON, never a 500', async (t) => {
  const h = await build(t)
  const u = await uploadRoutes(h)
  const id = await u.newShipment()
  const boundaryArb = fc.stringMatching(/^[A-Za-z0-9'()+_,\-./:=? ]{1,72}$/)
  const partArb = fc.record({
    name: fc.constantFrom('file', 'label', 'label_zpl', 'waybill', 'description', 'photo', 'constructor', '__proto__', ''),
    filename: fc.option(fc.constantFrom('a.pdf', '', '../../etc/passwd', 'ñ.html', 'x"y')),
    type: fc.option(fc.constantFrom('application/pdf', 'application/json', 'text/html', 'nonsense')),
    body: fc.oneof(fc.uint8Array({ maxLength: 48 }).map((a) => Buffer.from(a)), fc.constantFrom('%PDF-1.4', '{"a":1}', '{nope', '--', '\r\n--x\r\n')),
    // A part written with another boundary, or with bare LFs, or with no blank line after its headers.
    framing: fc.constantFrom('ok', 'ok', 'ok', 'other-boundary', 'lf', 'no-blank-line'),
  })
  const requestArb = fc.record({
    route: fc.constantFrom(...u.routes),
    boundary: boundaryArb,
    header: fc.constantFrom('boundary', 'quoted', 'none', 'empty', 'other', 'not-multipart-params'),
    parts: fc.array(partArb, { maxLength: 7 }),
    closing: fc.constantFrom('ok', 'missing', 'garbage'),
    cutAt: fc.option(fc.nat({ max: 600 })),
  })
  const bodyOf = (r: typeof requestArb extends fc.Arbitrary<infer R> ? R : never): Buffer => {
    const chunks: Buffer[] = []
    for (const p of r.parts) {
      const b = p.framing === 'other-boundary' ? `${r.boundary}z` : r.boundary
      const nl = p.framing === 'lf' ? '\n' : '\r\n'
      const disposition = `Content-Disposition: form-data; name="${p.name}"${p.filename === null ? '' : `; filename="${p.filename}"`}`
      const type = p.type === null ? '' : `${nl}Content-Type: ${p.type}`
      chunks.push(Buffer.from(`--${b}${nl}${disposition}${type}${p.framing === 'no-blank-line' ? nl : nl + nl}`), Buffer.from(p.body), Buffer.from(nl))
    }
    if (r.closing === 'ok') chunks.push(Buffer.from(`--${r.boundary}--\r\n`))
    if (r.closing === 'garbage') chunks.push(Buffer.from(`--${r.boundary}-\r\ntrailing`))
    const body = Buffer.concat(chunks)
    return r.cutAt === null ? body : body.subarray(0, r.cutAt)
  }
  const contentType = (r: { header: string; boundary: string }) => ({
    boundary: `multipart/form-data; boundary=${r.boundary}`,
    quoted: `multipart/form-data; boundary="${r.boundary}"`,
    none: 'multipart/form-data',
    empty: 'multipart/form-data; boundary=',
    other: 'multipart/form-data; boundary=somethingelse',
    'not-multipart-params': 'multipart/form-data; charset=utf-8',
  } as Record<string, string>)[r.header]!
  const statuses = new Map<number, number>()
  await fc.assert(fc.asyncProperty(requestArb, async (r) => {
    const res = await u.post(r.route, id, bodyOf(r), contentType(r))
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
    const what = `${r.route.name} ${JSON.stringify(contentType(r))} ${JSON.stringify(bodyOf(r).toString('latin1'))}`
    if (res.statusCode >= 500) throw new Error(`${res.statusCode} for ${what}: ${res.body}`)
    if (res.statusCode < 400) return
    if (!/^application\/json/.test(String(res.headers['content-type']))) throw new Error(`not JSON for ${what}: ${res.body}`)
    const body = res.json()
    const shaped = typeof body.message === 'string' && (res.statusCode === 422 ? typeof body.errors === 'object' && Object.keys(body.errors).length > 0 : typeof body.code === 'string')
    if (!shaped) throw new Error(`not the API's error shape for ${what}: ${res.body}`)
  }), { numRuns: Number(process.env.MULTIPART_PROPERTY_RUNS ?? 100) })
  t.ok([...statuses.keys()].some((s) => s === 400), `malformed bodies were generated (statuses ${JSON.stringify(Object.fromEntries(statuses))})`)
})

t.test('property: POST /tasks and every task transition never give a 500 and never write half a task', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ roles: ['carrier'] })
  const driverRes = await h.call('POST', '/api/v1/users', { token: carrier.token, body: { name: 'D', email: 'd@example.com', role: 'driver' } })
  const driverId = driverRes.json().user.id
  const base = await h.call('POST', '/api/v1/tasks', { token: carrier.token, body: { type: 'delivery', address: address() } })
  const baseUlid = base.json().task.ulid
  const eventCount = async () => Number((await sql<{ n: string }>`select count(*) as n from es_events`.execute(h.platform.db)).rows[0]!.n)
  const json = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string(), fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 8 }), tie('value'), { maxKeys: 4 })),
  })).value
  const date = fc.oneof(fc.date({ min: new Date('2026-01-01'), max: new Date('2027-01-01'), noInvalidDate: true }).map((d) => d.toISOString()), fc.string({ maxLength: 12 }))
  const validAddress = fc.oneof(fc.constant(address()), fc.constant({ place_id: 'ple_nope' }))
  const taskBody = fc.oneof(
    // Near-valid bodies (a good type and address, the rest random) reach the lookups and the append.
    fc.record({
      type: fc.constantFrom('pickup', 'delivery'),
      address: validAddress,
      time_windows: fc.array(fc.record({ from: date, to: date }), { maxLength: 2 }),
      dependencies: fc.array(fc.constantFrom(baseUlid, '01ARZ3NDEKTSV4RRFFQ69G5FAV'), { maxLength: 1 }),
      assignee_id: fc.constantFrom(driverId, 'usr_nope'),
      duration_minutes: fc.integer({ min: -1, max: 1500 }),
    }, { requiredKeys: ['type', 'address'] }),
    fc.record({
      type: fc.constantFrom('pickup', 'delivery', 'inspection', 'return', 'service', 'teleport', ''),
      address: fc.oneof(
        fc.record({ name: fc.string({ maxLength: 110 }), street: fc.string({ maxLength: 110 }), street_number: fc.string({ maxLength: 12 }), city: fc.constantFrom('Córdoba', 'Rosario', '', 'Nowhere'), country: fc.constantFrom('AR', 'XX', 'ARG') }, { requiredKeys: [] }),
        fc.record({ id: fc.string({ maxLength: 30 }) }), fc.record({ place_id: fc.string({ maxLength: 30 }) }), json,
      ),
      shipment_id: fc.option(fc.oneof(fc.integer({ min: -2, max: 1000 }), fc.string())),
      assignee_id: fc.option(fc.constantFrom(driverId, 'usr_nope', '', 5)),
      time_windows: fc.oneof(fc.array(fc.record({ from: date, to: date }, { requiredKeys: [] }), { maxLength: 4 }), json),
      duration_minutes: fc.option(fc.oneof(fc.integer({ min: -5, max: 2000 }), fc.double())),
      dependencies: fc.oneof(fc.array(fc.constantFrom(baseUlid, baseUlid.toLowerCase(), '01ARZ3NDEKTSV4RRFFQ69G5FAV', 'x'), { maxLength: 3 }), json),
      requirements: fc.oneof(fc.record({ complete: fc.array(fc.constantFrom('signature', 'photo', 'barcode_scan', 'notes', 'selfie'), { maxLength: 5 }), fail: fc.array(fc.string(), { maxLength: 2 }) }, { requiredKeys: [] }), json),
      load: fc.oneof(fc.record({ grams: fc.integer({ min: -1, max: 2_000_000_000 }), volume_cm3: fc.oneof(fc.integer(), fc.double()), packages: fc.integer({ min: -1, max: 10 }) }, { requiredKeys: [] }), json),
      notes: fc.option(fc.string({ maxLength: 1100 })),
    }, { requiredKeys: [] }),
    json,
  )
  let created = 0
  await fc.assert(fc.asyncProperty(taskBody, async (b) => {
    const before = await eventCount()
    const res = await h.call('POST', '/api/v1/tasks', { token: carrier.token, body: b as any })
    if (res.statusCode >= 500) throw new Error(`500 for ${JSON.stringify(b)}: ${res.body}`)
    const after = await eventCount()
    if (res.statusCode === 201) {
      created++
      if (after - before !== 1) throw new Error(`expected 1 event, got ${after - before}`)
      const row = await h.platform.rm.selectFrom('tasks').select('ulid').where('ulid', '=', res.json().task.ulid).executeTakeFirst()
      if (!row) throw new Error('created but not projected')
    } else if (after !== before) {
      throw new Error(`a ${res.statusCode} wrote ${after - before} events for ${JSON.stringify(b)}`)
    }
  }), { numRuns: Number(process.env.TASK_PROPERTY_RUNS ?? 100) })
  t.pass(`random task bodies, ${created} valid`)

  // Random transitions on a few tasks: a refused one writes nothing, an accepted one moves the
  // status the way its events say, and the read model agrees with the stream.
  const statusAfter: Record<string, string> = { TaskCreated: 'pending', TaskStarted: 'started', TaskArrived: 'arrived', TaskCompleted: 'complete', TaskFailed: 'failed', TaskCancelled: 'cancelled' }
  const step = fc.record({
    task: fc.nat({ max: 2 }),
    action: fc.constantFrom('start', 'arrive', 'complete', 'fail', 'cancel'),
    body: fc.oneof(
      fc.constant(undefined),
      fc.record({ reason: fc.constantFrom('no_answer', 'other', 'bored', 1), notes: fc.option(fc.string({ maxLength: 1100 })), signed_by: fc.option(fc.string({ maxLength: 110 })), barcode: fc.option(fc.string({ maxLength: 70 })), attachment_ids: fc.array(fc.string({ maxLength: 70 }), { maxLength: 2 }) }, { requiredKeys: [] }),
      json,
    ),
  })
  let accepted = 0
  await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 6 }), async (steps) => {
    const ulids: string[] = []
    for (let i = 0; i < 3; i++) {
      const r = await h.call('POST', '/api/v1/tasks', { token: carrier.token, body: { type: 'delivery', address: address(), ...(i === 2 ? { dependencies: [ulids[0]] } : {}), ...(i === 1 ? { requirements: { complete: ['signature'], fail: ['notes'] } } : {}) } })
      ulids.push(r.json().task.ulid)
    }
    for (const s of steps) {
      const ulid = ulids[s.task]!
      const before = await h.platform.store.readStream(`task-${ulid}`)
      const res = await h.call('POST', `/api/v1/tasks/${ulid}/${s.action}`, { token: carrier.token, ...(s.body !== undefined ? { body: s.body as any } : {}) })
      if (res.statusCode >= 500) throw new Error(`500 for ${s.action} ${JSON.stringify(s.body)}: ${res.body}`)
      const after = await h.platform.store.readStream(`task-${ulid}`)
      if (res.statusCode !== 200 && after.length !== before.length) throw new Error(`a ${res.statusCode} wrote ${after.length - before.length} events`)
      if (res.statusCode === 200) {
        accepted++
        if (after.length === before.length) throw new Error(`a 200 for ${s.action} wrote nothing`)
        const folded = statusAfter[after.at(-1)!.type]
        if (res.json().task.status !== folded) throw new Error(`the response says ${res.json().task.status}, the stream ${folded}`)
      }
      const row = await h.platform.rm.selectFrom('tasks').select('status').where('ulid', '=', ulid).executeTakeFirstOrThrow()
      if (row.status !== statusAfter[after.at(-1)!.type]) throw new Error(`read model ${row.status} disagrees with the stream`)
    }
  }), { numRuns: Number(process.env.TASK_TRANSITION_PROPERTY_RUNS ?? 40) })
  t.ok(accepted > 0, `random transitions, ${accepted} accepted`)
})

t.test('property: every route operation with random input never gives a 500, never writes on a refusal, keeps a task on one route', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ roles: ['carrier'] })
  const other = await h.createOrganization({ roles: ['carrier'] })
  const call = (method: string, path: string, body?: unknown) => h.call(method, `/api/v1${path}`, { token: carrier.token, ...(body !== undefined ? { body: body as any } : {}) })
  const driverId = (await call('POST', '/users', { name: 'D', email: 'rd@example.com', role: 'driver' })).json().user.id
  const vehicleId = (await call('POST', '/vehicles', { name: 'V', plate: 'RV 1', capacity: { grams: 5000, packages: 4 } })).json().vehicle.id
  const ulids: string[] = []
  for (let i = 0; i < 6; i++) {
    ulids.push((await call('POST', '/tasks', { type: i % 3 === 0 ? 'pickup' : 'delivery', address: address(), load: { grams: 1000 + i * 300, volume_cm3: 0, packages: 1 } })).json().task.ulid)
  }
  const theirs = (await h.call('POST', '/api/v1/tasks', { token: other.token, body: { type: 'delivery', address: address() } })).json().task.ulid
  const routeIds: number[] = []
  for (let i = 0; i < 2; i++) {
    const r = await call('POST', '/routes', { shift_date: '2026-11-26', vehicle_id: vehicleId })
    if (r.statusCode !== 201) throw new Error(`route: ${r.body}`)
    routeIds.push(r.json().route.id)
  }
  const eventCount = async () => Number((await sql<{ n: string }>`select count(*) as n from es_events`.execute(h.platform.db)).rows[0]!.n)
  const json = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string(), fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 8 }), tie('value'), { maxKeys: 4 })),
  })).value
  const ulid = fc.oneof(fc.constantFrom(...ulids), fc.constantFrom(ulids[0]!.toLowerCase(), theirs, '01ARZ3NDEKTSV4RRFFQ69G5FAV', 'x', ''), fc.string({ maxLength: 30 }))
  const routeId = fc.oneof(fc.constantFrom(...routeIds.map(String)), fc.constantFrom('0', '-1', '99999999999', 'abc', '1.5'))
  const foreign = fc.option(fc.oneof(fc.constantFrom(driverId, vehicleId, 'usr_nope', 'veh_nope', ''), fc.integer()))
  const validRoute = fc.constantFrom(...routeIds.map(String))
  const op = fc.oneof(
    // Near-valid operations (real routes and tasks) reach the decisions and the appends.
    { weight: 3, arbitrary: fc.record({ m: fc.constant('POST'), p: validRoute.map((id) => `/routes/${id}/tasks`), b: fc.record({ task_ulids: fc.array(fc.constantFrom(...ulids), { minLength: 1, maxLength: 2 }), position: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }) }, { requiredKeys: ['task_ulids'] }) }) },
    { weight: 2, arbitrary: fc.record({ m: fc.constant('DELETE'), p: fc.tuple(validRoute, fc.constantFrom(...ulids)).map(([id, u]) => `/routes/${id}/tasks/${u}`), b: fc.constant(undefined) }) },
    { weight: 1, arbitrary: fc.record({ m: fc.constant('PATCH'), p: validRoute.map((id) => `/routes/${id}`), b: fc.record({ driver_id: fc.constantFrom(driverId, null), name: fc.string({ minLength: 1, maxLength: 20 }) }, { requiredKeys: [] }).filter((x) => Object.keys(x).length > 0) }) },
    fc.record({ m: fc.constant('POST'), p: fc.constant('/routes'), b: fc.oneof(fc.record({
      shift_date: fc.oneof(fc.constantFrom('2026-11-26', '2026-02-30', '26/11/2026', ''), fc.string({ maxLength: 12 })), name: fc.option(fc.string({ maxLength: 110 })),
      driver_id: foreign, vehicle_id: foreign, task_ulids: fc.oneof(fc.array(ulid, { maxLength: 3 }), json), start_address: fc.option(fc.oneof(fc.constant(address()), json)),
    }, { requiredKeys: [] }), json) }),
    fc.record({ m: fc.constant('POST'), p: routeId.map((id) => `/routes/${id}/tasks`), b: fc.oneof(fc.record({ task_ulids: fc.oneof(fc.array(ulid, { maxLength: 3 }), json), position: fc.option(fc.oneof(fc.integer({ min: -1, max: 9 }), fc.double(), fc.string())) }, { requiredKeys: [] }), json) }),
    fc.record({ m: fc.constant('DELETE'), p: fc.tuple(routeId, ulid).map(([id, u]) => `/routes/${id}/tasks/${encodeURIComponent(u)}`), b: fc.constant(undefined) }),
    fc.record({ m: fc.constant('PUT'), p: routeId.map((id) => `/routes/${id}/tasks`), b: fc.oneof(fc.record({ task_ulids: fc.oneof(fc.shuffledSubarray(ulids), fc.array(ulid, { maxLength: 4 }), json) }, { requiredKeys: [] }), json) }),
    fc.record({ m: fc.constant('PATCH'), p: routeId.map((id) => `/routes/${id}`), b: fc.oneof(fc.record({ name: fc.option(fc.string({ maxLength: 110 })), driver_id: foreign, vehicle_id: foreign }, { requiredKeys: [] }), json) }),
    fc.record({ m: fc.constant('POST'), p: fc.tuple(routeId, fc.constantFrom('publish', 'block', 'unblock')).map(([id, a]) => `/routes/${id}/${a}`), b: fc.oneof(fc.constant(undefined), fc.record({ reason: fc.oneof(fc.string({ maxLength: 300 }), json) }, { requiredKeys: [] }), json) }),
    fc.record({ m: fc.constant('GET'), p: fc.tuple(routeId, fc.oneof(fc.constant(''), fc.constant('/events'), fc.string({ maxLength: 30 }).map((s) => `?as_of=${encodeURIComponent(s)}`))).map(([id, q]) => `/routes/${id}${q}`), b: fc.constant(undefined) }),
    fc.record({ m: fc.constant('GET'), p: fc.record({ shift_date: fc.string({ maxLength: 12 }), status: fc.constantFrom('draft', 'nope'), perPage: fc.integer({ min: -1, max: 200 }) }, { requiredKeys: [] }).map((q) => `/routes?${new URLSearchParams(q as any)}`), b: fc.constant(undefined) }),
  )
  let accepted = 0
  await fc.assert(fc.asyncProperty(op, async ({ m, p, b }) => {
    const before = await eventCount()
    const res = await call(m, p, b)
    if (res.statusCode >= 500) throw new Error(`500 for ${m} ${p} ${JSON.stringify(b)}: ${res.body}`)
    const after = await eventCount()
    if (res.statusCode >= 300 && after !== before) throw new Error(`a ${res.statusCode} for ${m} ${p} wrote ${after - before} events`)
    if (res.statusCode < 300 && m !== 'GET') accepted++
    // A task is on one route at most, in the read model as in the streams.
    const rows = await h.platform.rm.selectFrom('route_tasks').select(['task_ulid', 'route_id']).execute()
    const onRoutes = new Set<string>()
    for (const r of rows) {
      if (onRoutes.has(r.task_ulid)) throw new Error(`${r.task_ulid} on two routes`)
      onRoutes.add(r.task_ulid)
    }
  }), { numRuns: Number(process.env.ROUTE_PROPERTY_RUNS ?? 150) })
  t.ok(accepted > 0, `random route operations, ${accepted} accepted`)
  t.equal((await h.call('GET', `/api/v1/tasks/${theirs}`, { token: other.token })).json().route_id, null, 'another tenant\'s task was never routed')
})
