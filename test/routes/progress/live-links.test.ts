import { Writable } from 'node:stream'
import t from 'tap'
import { build } from '../../helpers/build.js'
import { liveLinkKey, signLiveToken } from '../../../src/routes/progress/live-token.js'
import { listen, openSse, progressWorld } from './fixtures.js'

t.test('live links: signed, expiring, read-only; the page and its stream show the route only for a valid link', async (t) => {
  const h = await build(t, { sseHeartbeatMs: 60_000 })
  const base = await listen(h.app)
  const w = await progressWorld(h)
  const [a, b] = await w.tasks(2)
  const id = await w.route({ tasks: [a!, b!], publish: true })
  const link = (body: unknown = {}, token = w.carrier.token, routeId = id) => h.call('POST', `/api/v1/routes/${routeId}/live-links`, { token, body })

  const made = await link({ ttl_minutes: 30 })
  t.equal(made.statusCode, 201, made.body)
  const { url, expires_at } = made.json()
  t.match(url, /^http:\/\/[^/]+\/live\/routes\/[\w.-]+$/)
  const ttl = Date.parse(expires_at) - Date.now()
  t.ok(ttl > 29 * 60_000 && ttl <= 30 * 60_000, `expires in 30 minutes (${ttl} ms)`)
  const byDefault = (await link()).json()
  t.ok(Math.abs(Date.parse(byDefault.expires_at) - Date.now() - 24 * 3600_000) < 60_000, 'a day by default')
  t.equal((await link(undefined)).statusCode, 201, 'no body at all')
  t.equal((await link({}, w.dispatcher.token)).statusCode, 201, 'a dispatcher may')
  const tooLong = await link({ ttl_minutes: 10_081 })
  t.equal(tooLong.statusCode, 422)
  t.ok(tooLong.json().errors.ttl_minutes)
  t.equal((await link({ ttl_minutes: 0 })).statusCode, 422)
  const stranger = await h.createOrganization({ roles: ['carrier'] })
  t.equal((await link({}, stranger.token)).statusCode, 404, 'another tenant\'s route')

  const path = new URL(url).pathname
  const token = path.split('/').pop()!

  t.test('the page: static HTML with EventSource, no data in it, nothing sent on as referrer', async (t) => {
    const res = await fetch(`${base}${path}`)
    t.equal(res.status, 200)
    t.match(res.headers.get('content-type'), /^text\/html/)
    t.equal(res.headers.get('referrer-policy'), 'no-referrer')
    t.match(res.headers.get('content-security-policy'), /connect-src 'self'/)
    const html = await res.text()
    t.match(html, /new EventSource/)
    t.notMatch(html, /innerHTML/)
    t.notMatch(html, a!, 'the route\'s data comes only through the stream')
  })

  t.test('its stream: the snapshot, then the changes; no bearer token needed', async (t) => {
    const s = await openSse(`${base}${path}/stream`)
    t.equal(s.status, 200)
    await s.until((e) => e.some((x) => x.event === 'snapshot'))
    const snap = JSON.parse(s.events.find((x) => x.event === 'snapshot')!.data!)
    t.same(snap.tasks.map((x: any) => x.ulid), [a, b])
    await w.transition(b!, 'complete', { signed_by: 'Bo' })
    const got = await s.until((e) => e.some((x) => x.event === 'task.completed'))
    t.match(JSON.parse(got.find((x) => x.event === 'task.completed')!.data!), { task_ulid: b, status: 'complete', progress: { complete: 1, percent: 50 } })
    s.close()
    const bad = await fetch(`${base}${path}/stream`, { headers: { 'last-event-id': '-1' } })
    t.equal(bad.status, 422)
  })

  t.test('altered, foreign-keyed or expired: the page says so, the stream is a 404, nothing of the route shows', async (t) => {
    const [route, expires, sig] = token.split('.')
    const flip = (s: string) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1)
    const key = liveLinkKey(h.platform.secretsKey)
    const other = await w.route({ tasks: [], publish: false })
    const cases: Record<string, string> = {
      'signature altered': `${route}.${expires}.${flip(sig!)}`,
      'expiry pushed out': `${route}.${Number(expires) + 3600}.${sig}`,
      'another route': `${other}.${expires}.${sig}`,
      // The signed numbers with a leading zero read as the same numbers: only the spelling signed opens.
      'route id with a leading zero': `0${route}.${expires}.${sig}`,
      'expiry with a leading zero': `${route}.0${expires}.${sig}`,
      'another key': signLiveToken(liveLinkKey(Buffer.alloc(32, 1)), id, w.carrier.id, new Date(Date.now() + 3600_000)),
      'another organization': signLiveToken(key, id, stranger.id, new Date(Date.now() + 3600_000)),
      expired: signLiveToken(key, id, w.carrier.id, new Date(Date.now() - 1000)),
      garbage: 'not-a-token',
    }
    for (const [what, bad] of Object.entries(cases)) {
      const page = await fetch(`${base}/live/routes/${encodeURIComponent(bad)}`)
      t.equal(page.status, 404, `${what}: page`)
      const html = await page.text()
      t.match(html, /expired or invalid/i, what)
      t.notMatch(html, /EventSource/, `${what}: no stream is opened`)
      const stream = await fetch(`${base}/live/routes/${encodeURIComponent(bad)}/stream`)
      t.equal(stream.status, 404, `${what}: stream`)
      const body = await stream.text()
      t.notMatch(body, a!, `${what}: nothing of the route`)
      const data = await fetch(`${base}/live/routes/${encodeURIComponent(bad)}/data`)
      t.equal(data.status, 404, `${what}: data`)
      t.notMatch(await data.text(), a!, `${what}: nothing of the route in its data`)
    }
    t.equal((await fetch(`${base}/live/routes/${signLiveToken(key, id, w.carrier.id, new Date(Date.now() + 3600_000))}`)).status, 200, 'a fresh one made with the same key opens')
    t.equal((await fetch(`${base}/live/routes/${token}/data`)).status, 200, 'the link as issued still opens its data')
  })

  t.test('an open stream ends when its link expires', async (t) => {
    const key = liveLinkKey(h.platform.secretsKey)
    const soon = signLiveToken(key, id, w.carrier.id, new Date(Math.ceil((Date.now() + 1500) / 1000) * 1000))
    const s = await openSse(`${base}/live/routes/${soon}/stream`)
    t.equal(s.status, 200)
    const started = Date.now()
    await s.ended
    const ended = Date.now() - started
    t.ok(ended < 5000, `ended after ${ended} ms`)
  })
})

t.test('/live/assets/<name>: a name an object inherits (constructor, __proto__, toString, valueOf) is a 404, and nothing is logged as an error', async (t) => {
  const lines: string[] = []
  const stream = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done() } })
  const h = await build(t, {}, {}, { logger: { level: 'info', stream } })
  const base = await listen(h.app)
  for (const name of ['constructor', '__proto__', 'toString', 'valueOf']) {
    const res = await fetch(`${base}/live/assets/${name}`)
    t.equal(res.status, 404, name)
    t.match(await res.json(), { code: 'not_found' }, `${name}: the API's 404`)
  }
  t.equal((await fetch(`${base}/live/assets/leaflet.css`)).status, 200, 'the real assets are still served')
  const logged = lines.map((l) => JSON.parse(l))
  t.ok(logged.some((l) => l.url === '/live/assets/constructor'), 'the requests were logged')
  t.same(logged.filter((l) => l.level >= 50), [], 'no error logged')
})
