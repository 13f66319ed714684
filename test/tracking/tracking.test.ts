import t from 'tap'
import { build } from '../helpers/build.js'
import { listen, openSse, type SseClient } from '../routes/progress/fixtures.js'
import { closeIdleConnections } from '../../src/notifications/safe-http.js'
import { signTrackingToken, trackingKey } from '../../src/shipments/tracking-token.js'
import { keysOf, north, OTHER_STREET, PHONE, RECIPIENT, trackingWorld, until } from './fixtures.js'

// DESIGN §3.10 end to end: a public shipment's link, page, data and stream; what they show as the
// delivery moves (status, stops before, ETA window, driver's first name, the map when next), and
// nothing else; links that open nothing; the safety headers.

t.teardown(() => closeIdleConnections())

const frames = (s: SseClient) => s.events.filter((e) => e.event === 'tracking').map((e) => ({ id: e.id!, view: JSON.parse(e.data!) }))
const lastView = (s: SseClient) => frames(s).at(-1)?.view

t.test('public tracking: link, page, data and stream follow the delivery and show nothing else', async (t) => {
  const h = await build(t, { sseHeartbeatMs: 60_000, natsUrl: process.env.NATS_URL })
  const base = await listen(h.app)
  const w = await trackingWorld(h, { natsUrl: process.env.NATS_URL })
  t.teardown(() => w.bg?.stop())
  const data = async (headers: Record<string, string> = {}) => h.app.inject({ method: 'GET', url: `${w.path}/data`, headers })

  t.test('public_tracking_url: on the public shipment for shipper and carrier, null on another', async (t) => {
    t.match(w.shipment.public_tracking_url, /^http:\/\/localhost(:\d+)?\/track\/[0-9A-HJKMNP-TV-Z]{26}\.[\w-]{22}$/)
    const asCarrier = (await w.api('GET', `/shipments/${w.shipment.id}`)).json()
    t.equal(asCarrier.public_tracking_url, w.shipment.public_tracking_url, 'the carrier reads the same link')
    const listed = (await h.call('GET', '/api/v1/shipments', { token: w.shipper.token })).json().shipments.data
    t.equal(listed.find((s: any) => s.id === w.shipment.id).public_tracking_url, w.shipment.public_tracking_url)
    t.equal(listed.find((s: any) => s.id === w.privateShipment.id).public_tracking_url, null, 'a shipment without is_public: null')
    const other = (await h.call('GET', `/api/v1/shipments/${w.shipment.id}`, { token: w.shipper.token, headers: { host: 'tracking.example' } })).json()
    t.match(other.public_tracking_url, /^http:\/\/tracking\.example\/track\//, 'made from the request\'s origin (no PUBLIC_BASE_URL), never a cached other one')
  })

  t.test('before a route: carrier, status, timeline, promised delivery; no delivery block', async (t) => {
    const res = await data({ 'accept-language': 'en' })
    t.equal(res.statusCode, 200, res.body)
    const v = res.json()
    t.match(v, { locale: 'en', carrier: String, status: { code: 'pending', name: 'Pending' }, final: false, delivery: null })
    t.equal(v.carrier, (await w.api('GET', `/shipments/${w.shipment.id}`)).json().carrier.name)
    t.ok(v.timeline.length >= 1 && v.timeline[0].code === 'pending')
    t.equal(v.promised_delivery_at, w.shipment.promised_delivery_at)
    const es = (await data({ 'accept-language': 'es-AR,es;q=0.9,en;q=0.5' })).json()
    t.match(es, { locale: 'es', status: { name: 'Pendiente' } }, 'Accept-Language picks Spanish')
  })

  const stream = await openSse(`${base}${w.path}/stream`, { 'accept-language': 'en' })
  t.teardown(() => stream.close())
  await stream.until((e) => e.some((x) => x.event === 'tracking'))

  t.test('the stream: the view first; a carrier renaming its status reaches it, as text', async (t) => {
    t.equal(stream.status, 200)
    t.match(stream.headers['content-type'], /^text\/event-stream/)
    t.match(stream.headers['cache-control'], /no-store/)
    t.equal(stream.headers['referrer-policy'], 'no-referrer')
    t.equal(lastView(stream).status.code, 'pending')
    const renamed = await w.api('PATCH', '/shipment-statuses/pending', { name: '<img src=x onerror=alert(1)>' })
    t.equal(renamed.statusCode, 200, renamed.body)
    await stream.until(() => lastView(stream)?.status.name === '<img src=x onerror=alert(1)>')
    t.pass('the carrier organization\'s name for the status, in the stream as data')
  })

  const routeId = await w.route([w.before, w.delivery, w.after])

  t.test('on a started route: out for delivery, one stop before, ETA window, the driver\'s first name; no map yet', async (t) => {
    t.equal((await w.report([north(0)])).statusCode, 202)
    t.equal((await w.transition(w.before, 'start', undefined, w.driver.token)).statusCode, 200)
    await w.started(routeId)
    await stream.until(() => {
      const v = lastView(stream)
      return v?.status.code === 'out_for_delivery' && v.delivery?.eta !== null && v.delivery?.eta !== undefined
    }, 15_000)
    const v = lastView(stream)
    t.match(v.delivery, { stops_before: 1, driver: 'Dana', map: null })
    t.ok(Date.parse(v.delivery.eta.from) < Date.parse(v.delivery.eta.to), 'a window')
    t.same((await data({ 'accept-language': 'en' })).json(), v, '/data says the same')
  })

  t.test('the stop before is done: this stop is next, the driver shows on the map, positions move it', async (t) => {
    t.equal((await w.transition(w.before, 'complete', { signed_by: 'Vecino' }, w.driver.token)).statusCode, 200)
    await stream.until(() => lastView(stream)?.delivery?.stops_before === 0, 15_000)
    t.equal((await w.report([north(2.5)])).statusCode, 202)
    await stream.until(() => lastView(stream)?.delivery?.map?.driver.lat === north(2.5).lat, 15_000)
    const v = lastView(stream)
    t.same(v.delivery.map.destination, north(4), 'the delivery point, to draw the map')
    t.equal((await w.report([north(3)])).statusCode, 202)
    await stream.until(() => lastView(stream)?.delivery?.map?.driver.lat === north(3).lat, 15_000)
  })

  t.test('nothing else, anywhere: no other stop, recipient, phone, internal id or full driver name', async (t) => {
    const page = await h.app.inject({ method: 'GET', url: w.path })
    const json = (await data()).body
    const ids = [w.delivery, w.before, w.after, w.shipment.ulid, w.driver.id, w.carrier.id, w.shipper.id]
    for (const [what, text] of [['page', page.body], ['data', json], ['stream', stream.body]] as const) {
      for (const secret of [RECIPIENT, 'Rita', PHONE, '5550199', '555 0199', OTHER_STREET, 'Vecino', 'Oroño', 'Dana Driver', 'Driver', ...ids]) {
        t.notOk(text.includes(secret), `${what}: no ${secret}`)
      }
    }
    const keys = keysOf(JSON.parse(json))
    t.notOk([...keys].some((k) => /(^id$|_id$|ulid|name$|phone|address|street|email)/.test(k) && k !== 'name'), `no id, address or person field: ${[...keys].join(',')}`)
    t.notOk(json.includes(`"${routeId}"`) || /"route/.test(json), 'no route id')
  })

  t.test('Last-Event-ID: the view the client has is not sent again; a change is', async (t) => {
    // Once the ETA engine has caught up with the last position, the view stays as it is.
    let seen = -1
    await until(async () => {
      const n = frames(stream).length
      if (n === seen) return true
      seen = n
      await new Promise((r) => setTimeout(r, 700))
      return false
    }, 15_000, 'a quiet stream')
    const last = frames(stream).at(-1)!
    const again = await openSse(`${base}${w.path}/stream`, { 'last-event-id': last.id, 'accept-language': 'en' })
    t.teardown(() => again.close())
    await new Promise((r) => setTimeout(r, 300))
    // On a loaded machine the ETA engine may still move the window after the quiet spell; then the
    // new view is due on both streams, but the one the client has is never sent again.
    const sent = frames(again)
    t.notOk(sent.some((f) => f.id === last.id || JSON.stringify(f.view) === JSON.stringify(last.view)), 'the view the client has is not sent again')
    if (sent.length > 0) {
      await stream.until(() => frames(stream).some((f) => f.id === sent.at(-1)!.id), 15_000)
      t.pass('a frame only for a change the first stream got as well')
    } else {
      t.equal(sent.length, 0, 'nothing new: nothing sent')
    }
    t.equal((await w.report([north(3.5)])).statusCode, 202)
    await again.until(() => frames(again).some((f) => f.view.delivery?.map?.driver.lat === north(3.5).lat), 15_000)
    t.not(frames(again)[0]!.id, last.id)
    const bad = await h.app.inject({ method: 'GET', url: `${w.path}/stream`, headers: { 'last-event-id': '<script>' } })
    t.equal(bad.statusCode, 422, 'a Last-Event-ID this server never sent')
  })

  t.test('delivered: final, no delivery block; 30 days later the link opens nothing, and an open stream is told', async (t) => {
    t.equal((await w.transition(w.delivery, 'start', undefined, w.driver.token)).statusCode, 200)
    t.equal((await w.transition(w.delivery, 'complete', { signed_by: 'Rita' }, w.driver.token)).statusCode, 200)
    await stream.until(() => lastView(stream)?.status.code === 'delivered', 15_000)
    t.match(lastView(stream), { final: true, delivery: null })
    t.equal((await data()).statusCode, 200, 'still open right after')
    const realClock = h.platform.clock
    h.platform.clock = () => new Date(realClock().getTime() + 30 * 86400_000 + 60_000)
    t.teardown(() => { h.platform.clock = realClock })
    const lapsed = await h.app.inject({ method: 'GET', url: w.path })
    t.equal(lapsed.statusCode, 404)
    t.match(lapsed.body, /Tracking not available/)
    t.equal((await data()).statusCode, 404)
    // Any change of the shipment's read models wakes its open stream: here the carrier's status names.
    t.equal((await w.api('PATCH', '/shipment-statuses/delivered', { name: 'Entregado ya' })).statusCode, 200)
    await stream.until((e) => e.some((x) => x.event === 'gone'), 15_000)
    await stream.ended
    h.platform.clock = realClock
  })
})

t.test('links that open nothing: altered, not public, unknown, malformed; clear 404 page, never a 500', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ roles: ['carrier'] })
  const shipper = await h.createOrganization({ roles: ['shipper'] })
  await h.signContract(carrier.id, shipper.id)
  const ship = async (isPublic: boolean) => (await h.call('POST', '/api/v1/shipments', {
    token: shipper.token,
    body: {
      carrier_id: carrier.id, is_public: isPublic, packages: [{ grams: 1, length: 1, width: 1, height: 1 }],
      origin: { name: 'A', street: 'S', street_number: '1', city: 'Rosario', state: 'Santa Fe', country: 'AR' },
      destination: { name: 'Secret Person', street: 'Hidden St', street_number: '9', city: 'Rosario', state: 'Santa Fe', country: 'AR' },
    },
  })).json().shipment
  const pub = await ship(true)
  const priv = await ship(false)
  t.equal(priv.public_tracking_url, null, 'without is_public: null')
  const token = new URL(pub.public_tracking_url).pathname.split('/').pop()!
  const [ulid, sig] = token.split('.')
  const key = trackingKey(h.platform.secretsKey)
  const cases: Array<[string, string]> = [
    ['altered', `${ulid}.${(sig![0] === 'A' ? 'B' : 'A') + sig!.slice(1)}`],
    ['another shipment\'s signature', `${priv.ulid}.${sig}`],
    ['not public, signed by this server', signTrackingToken(key, priv.ulid)],
    ['unknown shipment', signTrackingToken(key, '01ARZ3NDEKTSV4RRFFQ69G5FAV')],
    ['malformed', 'not-a-token'],
    ['markup', '%3Cscript%3Ealert(1)%3C%2Fscript%3E'],
    ['long', 'x'.repeat(90)],
  ]
  for (const [what, tok] of cases) {
    const page = await h.app.inject({ method: 'GET', url: `/track/${tok}`, headers: { 'accept-language': 'es' } })
    t.equal(page.statusCode, 404, `${what}: page`)
    t.match(page.headers['content-type'], /text\/html/)
    t.match(page.body, /Seguimiento no disponible/, `${what}: the Spanish "not available" page`)
    t.notMatch(page.body, /Secret|Hidden|Pending|Pendiente/, `${what}: nothing of the shipment`)
    t.equal(page.headers['referrer-policy'], 'no-referrer')
    for (const sub of ['data', 'stream']) {
      const res = await h.app.inject({ method: 'GET', url: `/track/${tok}/${sub}` })
      t.equal(res.statusCode, 404, `${what}: ${sub}`)
      t.notMatch(res.body, /Secret|Hidden|pending/)
    }
  }
  const ok = await h.app.inject({ method: 'GET', url: `/track/${token}` })
  t.equal(ok.statusCode, 200)
  t.equal(ok.headers['referrer-policy'], 'no-referrer')
  t.equal(ok.headers['x-content-type-options'], 'nosniff')
  t.match(ok.headers['cache-control'], /no-store/)
  t.match(ok.headers['cache-control'], /private/)
  const csp = String(ok.headers['content-security-policy'])
  t.match(csp, /default-src 'none'/)
  t.match(csp, /script-src 'sha256-[^']+'(;|$)/, 'only the page\'s own script')
  t.notMatch(csp, /https?:|\*|unsafe-inline|unsafe-eval/, 'no outside source')
  t.notMatch(ok.body, /<script[^>]+src=|<link[^>]+href=|https?:\/\/(?!www\.w3\.org)/, 'no outside request in the page')
  const d = await h.app.inject({ method: 'GET', url: `/track/${token}/data`, headers: { authorization: 'Bearer nonsense' } })
  t.equal(d.statusCode, 200, 'no bearer token needed, a bad one changes nothing')
  t.match(d.headers['cache-control'], /private, no-store/)
  t.equal(d.headers['x-content-type-options'], 'nosniff')
  const stranger = await h.createOrganization({ roles: ['shipper'] })
  t.equal((await h.call('GET', `/api/v1/shipments/${pub.id}`, { token: stranger.token })).statusCode, 404, 'another tenant does not learn the link')
  const listed = await h.call('GET', '/api/v1/shipments', { token: stranger.token })
  t.notOk(listed.body.includes(token), 'nor from a listing')
  const strangerCarrier = await h.createOrganization({ roles: ['carrier'] })
  t.equal((await h.call('GET', `/api/v1/tasks?shipment_id=${pub.id}`, { token: strangerCarrier.token })).json().data.length, 0, 'nor another carrier its tasks')
})

t.test('the organization\'s locale is the default; Accept-Language picks between Spanish and English', async (t) => {
  const h = await build(t)
  const res = await h.admin('POST', '/organizations', { name: 'Correo Andino', subdomain: `andino-${process.pid}-${Date.now()}`, roles: ['carrier'], locale: 'es-AR', currency: 'ARS' })
  t.equal(res.statusCode, 201, res.body)
  const carrier = res.json().organization
  const shipper = await h.createOrganization({ roles: ['shipper'] })
  await h.signContract(carrier.id, shipper.id)
  const address = { name: 'A', street: 'S', street_number: '1', city: 'Rosario', state: 'Santa Fe', country: 'AR' }
  const s = (await h.call('POST', '/api/v1/shipments', { token: shipper.token, body: { carrier_id: carrier.id, is_public: true, origin: address, destination: address, packages: [{ grams: 1, length: 1, width: 1, height: 1 }] } })).json().shipment
  const path = new URL(s.public_tracking_url).pathname
  const page = (lang?: string) => h.app.inject({ method: 'GET', url: path, headers: lang ? { 'accept-language': lang } : {} })
  t.match((await page()).body, /<html lang="es">/, 'the organization\'s locale')
  t.match((await page('fr-FR,fr;q=0.9')).body, /<html lang="es">/, 'neither language accepted: the organization\'s')
  t.match((await page('en-GB,en;q=0.9')).body, /<html lang="en">/, 'English accepted')
  t.match((await page('de;q=1, en;q=0.2, es;q=0.8')).body, /<html lang="es">/, 'by weight')
  t.equal((await page('\u0000;;;q=x,,,')).statusCode, 200, 'a garbled header: the default')
  t.match((await h.app.inject({ method: 'GET', url: `${path}/data` })).json(), { locale: 'es', carrier: 'Correo Andino', status: { name: 'Pendiente' } })
})

t.test('rate limited per client address: 429 with Retry-After; another address is not', async (t) => {
  const h = await build(t, { trackingRateLimitPerMinute: 3 })
  const get = (ip: string) => h.app.inject({ method: 'GET', url: '/track/not-a-token', remoteAddress: ip })
  for (let i = 0; i < 3; i++) t.equal((await get('10.0.0.1')).statusCode, 404)
  const limited = await get('10.0.0.1')
  t.equal(limited.statusCode, 429)
  t.ok(Number(limited.headers['retry-after']) > 0)
  t.equal(limited.headers['referrer-policy'], 'no-referrer')
  t.equal((await get('10.0.0.2')).statusCode, 404, 'another address has its own budget')
})
