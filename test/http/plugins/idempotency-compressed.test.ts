import { execFile } from 'node:child_process'
import type { AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { ADMIN_TOKEN, build } from '../../helpers/build.js'

const run = promisify(execFile)

/**
 * Retries through real HTTP clients, which ask for compressed answers (Node's fetch sends
 * `Accept-Encoding: gzip, deflate, br`, curl `--compressed` likewise). A response over 1 KiB is
 * compressed on its way out; the kept response must still be the first answer, for every POST.
 */
t.test('Idempotency-Key holds through a listening server for clients that accept compression', async (t) => {
  const h = await build(t)
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`

  interface Sent { status: number; replayed: boolean; encoding: string | null; body: any }
  /** Node's fetch with its own default headers (no Accept-Encoding set here). */
  const post = async (path: string, token: string, body: unknown, key: string): Promise<Sent> => {
    const res = await fetch(base + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    })
    return { status: res.status, replayed: res.headers.get('idempotent-replayed') === 'true', encoding: res.headers.get('content-encoding'), body: await res.json() }
  }
  const get = async (path: string, token: string): Promise<any> =>
    (await fetch(base + path, { headers: { authorization: `Bearer ${token}` } })).json()
  /** The same POST three times: one execution, two replays of its answer. */
  const thrice = async (t: Test, path: string, token: string, body: unknown, key: string, status = 201) => {
    const first = await post(path, token, body, key)
    t.equal(first.status, status, `${path}: ${JSON.stringify(first.body).slice(0, 300)}`)
    t.notOk(first.replayed, `${path}: the first answer is not a replay`)
    for (const n of [2, 3]) {
      const again = await post(path, token, body, key)
      t.equal(again.status, status, `${path} #${n}`)
      t.ok(again.replayed, `${path} #${n}: idempotent-replayed`)
      t.same(again.body, first.body, `${path} #${n}: the first answer again`)
      t.equal(again.encoding, first.encoding, `${path} #${n}: compressed like the first answer (${first.encoding})`)
    }
    return first
  }

  const org = async (name: string, subdomain: string, roles: string[]) => {
    const created = await thrice(t, '/admin/v1/organizations', ADMIN_TOKEN,
      { name, subdomain: `${subdomain}-${process.pid}`, roles, currency: 'ARS', carriers_enabled: roles.includes('carrier') }, `org-${subdomain}`)
    return { id: created.body.organization.id as string, token: created.body.access_token as string }
  }
  const carrier = await org('Fast Carrier', 'fast', ['carrier'])
  const shipper = await org('Big Shipper', 'big', ['shipper'])
  t.equal((await fetch(`${base}/api/v1/organizations/my`, { headers: { authorization: `Bearer ${shipper.token}` } })).status, 200,
    'the token shown once, replayed, is the one that works')
  const contract = await post('/admin/v1/contracts', ADMIN_TOKEN, { carrier_id: carrier.id, shipper_id: shipper.id }, 'contract-1')
  t.equal(contract.status, 201)

  const place = await thrice(t, '/api/v1/organizations/my/places', shipper.token,
    { name: 'Depot', street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR' }, 'place-1')
  const shipmentBody = {
    carrier_id: carrier.id, external_reference: 'PO-1', origin: { place_id: place.body.place.id },
    destination: { name: 'Ana Gómez', street: 'Av. Santa Fe', street_number: '1860', city: 'Rosario', state: 'Santa Fe', country: 'AR' },
    packages: [{ grams: 800, length: 10, width: 10, height: 10 }],
  }

  t.test('shipments: Node fetch retries create one shipment', async (t) => {
    const first = await thrice(t, '/api/v1/shipments', shipper.token, shipmentBody, 'shipment-1')
    t.ok(first.encoding, `the answer was compressed (${first.encoding}): the case real clients meet`)
    const list = await get(`/api/v1/shipments`, shipper.token)
    t.equal(list.shipments.meta.total, 1, 'one shipment, not three')
  })

  t.test('shipments: curl --compressed retries create one shipment', async (t) => {
    const body = JSON.stringify({ ...shipmentBody, external_reference: 'PO-2' })
    const curl = () => run('curl', ['-s', '--compressed', '-D', '-', '-XPOST', `${base}/api/v1/shipments`,
      '-H', `authorization: Bearer ${shipper.token}`, '-H', 'content-type: application/json', '-H', 'idempotency-key: curl-1', '-d', body])
    const answers = []
    for (let i = 0; i < 3; i++) {
      const { stdout } = await curl()
      const [head, json] = stdout.split('\r\n\r\n')
      answers.push({ head: head!.toLowerCase(), shipment: JSON.parse(json!).shipment })
    }
    t.match(answers[0]!.head, /content-encoding: (br|gzip|deflate)/, 'curl was answered compressed')
    t.notMatch(answers[0]!.head, /idempotent-replayed/)
    for (const a of answers.slice(1)) {
      t.match(a.head, /idempotent-replayed: true/)
      t.equal(a.shipment.id, answers[0]!.shipment.id)
    }
    const list = await get(`/api/v1/shipments?external_reference=PO-2`, shipper.token)
    t.equal(list.shipments.data.filter((s: { external_reference: string }) => s.external_reference === 'PO-2').length, 1)
  })

  t.test('one POST of each module, credentials shown once included', async (t) => {
    const carrierApp = await thrice(t, '/api/v1/carriers', carrier.token, { name: 'Own fleet', integration: 'custom', visibility: 'private' }, 'carrier-1')
    t.match(carrierApp.body.api_key, /^ck_/)
    const driver = await thrice(t, '/api/v1/users', carrier.token, { name: 'Dana Driver', email: 'dana@fast.example', role: 'driver' }, 'user-1')
    t.match(driver.body.access_token, /\w/)
    const van = await thrice(t, '/api/v1/vehicles', carrier.token, { name: 'Van 1', plate: 'AB 123 CD', capacity: { grams: 800000, volume_cm3: null, packages: 120 } }, 'vehicle-1')
    const hook = await thrice(t, '/api/v1/webhooks', carrier.token, { url: 'http://127.0.0.1:9/ops', events: ['task.*'] }, 'webhook-1')
    t.match(hook.body.secret, /^whsec_/)
    const task = await thrice(t, '/api/v1/tasks', carrier.token, {
      type: 'delivery', address: { name: 'Customer', street: 'Bv. Oroño', street_number: '850', city: 'Rosario', state: 'Santa Fe', country: 'AR' },
    }, 'task-1')
    await thrice(t, '/api/v1/blueprints', carrier.token, {
      key: 'one-step', name: 'One step', start_steps: ['deliver'],
      steps: [{ key: 'deliver', name: 'Deliver', task: { type: 'delivery', address: 'destination' }, on_complete: [{ do: 'complete_workflow' }] }],
    }, 'blueprint-1')
    const tomorrow = new Date(Date.now() + 864e5).toISOString().slice(0, 10)
    const route = await thrice(t, '/api/v1/routes', carrier.token, { shift_date: tomorrow, name: 'North', vehicle_id: van.body.vehicle.id }, 'route-1')
    await thrice(t, `/api/v1/routes/${route.body.route.id}/tasks`, carrier.token, { task_ulids: [task.body.task.ulid] }, 'route-tasks-1', 200)
    const tasks = await get(`/api/v1/tasks`, carrier.token)
    t.equal(tasks.meta.total, 1, 'one task')
    const users = await get(`/api/v1/users?role=driver`, carrier.token)
    t.equal(users.data.length, 1, 'one driver')
  })
})
