import { mkdirSync, readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'
import t from 'tap'
import { chromium, type Browser, type Page } from 'playwright-core'
import { launch, axeProblems } from '../../helpers/browser.js'
import { build } from '../../helpers/build.js'
import { liveLinkKey, signLiveToken } from '../../../src/routes/progress/live-token.js'
import { listen, progressWorld } from './fixtures.js'
import { addressAt, etaWorld, north } from '../../etas/fixtures.js'

// The functions below run in the page (the project's types carry no DOM library).
declare const document: any
declare const window: any
declare const getComputedStyle: any

const SHOTS = '.local/screenshots'
const XSS = '<img src=x onerror=alert(1)>'

/** axe-core run in the page: the serious and critical violations, each with its rule and first target. */
/** Every request the page makes that leaves its own origin. */
function outsideRequests(page: Page, origin: string): string[] {
  const out: string[] = []
  page.on('request', (r) => { const u = r.url(); if (!u.startsWith(origin) && !u.startsWith('data:')) out.push(u) })
  return out
}

const isoIn = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString()

t.test('the dispatcher\'s page: names, stops, windows, ETAs and the driver; status, ETA and position changes appear live', async (t) => {
  const h = await build(t, { sseHeartbeatMs: 60_000 })
  const base = await listen(h.app)
  const w = await etaWorld(h)
  const vehicle = (await w.api('POST', '/vehicles', { name: 'Kangoo 2', plate: 'AB 123 CD', capacity: { grams: 500_000, packages: 60 } })).json().vehicle
  const people = ['Lucía Fernández', 'Sofía Benítez', 'Martín Ríos', 'Carla Domínguez', 'Juan Pérez']
  const stops: string[] = []
  for (const [i, name] of people.entries()) {
    stops.push(await w.taskAt(1.2 * (i + 1), {
      address: addressAt({ lat: north(1.2 * (i + 1)).lat, lng: -60.65 + (i % 2 ? 0.012 : -0.006) * i }, { name, street: ['Córdoba', 'Mitre', 'Sarmiento', 'Urquiza', 'Entre Ríos'][i], street_number: String(1100 + 37 * i), floor: i === 2 ? '3' : null, apartment: i === 2 ? 'B' : null, zipcode: 'S2000' }),
      time_windows: [{ from: isoIn(-30 + 20 * i), to: isoIn(60 + 20 * i) }],
    }))
  }
  const [a, b, c] = stops
  const res = await w.api('POST', '/routes', { name: 'Rosario north · morning', shift_date: new Date().toISOString().slice(0, 10), driver_id: w.driver.id, vehicle_id: vehicle.id, task_ulids: stops, start_address: addressAt(north(0)) })
  t.equal(res.statusCode, 201, res.body)
  const id = res.json().route.id as number
  t.equal((await w.api('POST', `/routes/${id}/publish`)).statusCode, 200)
  t.equal((await w.report([north(0)])).statusCode, 202)
  t.equal((await w.transition(a!, 'start', undefined, w.driver.token)).statusCode, 200)
  await w.started(id)
  t.equal((await w.transition(a!, 'complete', { signed_by: 'Lucía' }, w.driver.token)).statusCode, 200)
  t.equal((await w.transition(b!, 'fail', { reason: 'no_answer' }, w.driver.token)).statusCode, 200)
  await w.routeWhen(id, (r) => r.tasks[2].eta !== null && r.tasks[4].eta !== null, 'ETAs of the open stops')

  const made = await w.api('POST', `/routes/${id}/live-links`, { ttl_minutes: 60 })
  t.equal(made.statusCode, 201)
  const path = new URL(made.json().url).pathname
  const browser = await launch()
  t.teardown(() => browser.close())
  mkdirSync(SHOTS, { recursive: true })

  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  const outside = outsideRequests(page, base)
  let dialog = false
  page.on('dialog', (d) => { dialog = true; void d.dismiss() })
  const response = await page.goto(`${base}${path}`)
  t.equal(response?.status(), 200)
  const headers = response!.headers()
  t.equal(headers['referrer-policy'], 'no-referrer')
  t.equal(headers['x-content-type-options'], 'nosniff')
  t.match(headers['cache-control'], /no-store/)
  t.match(headers['content-security-policy'], /default-src 'none'/)
  t.notMatch(headers['content-security-policy'], /https?:/, 'no outside origin allowed without tiles')
  await page.waitForFunction(() => document.querySelectorAll('#tasks li').length === 5 && document.querySelectorAll('#tasks .eta').length >= 3)

  t.equal(await page.textContent('#route-name'), 'Rosario north · morning')
  t.equal(await page.textContent('#driver'), 'Dana Driver')
  t.equal(await page.textContent('#vehicle'), 'Kangoo 2 (AB 123 CD)')
  const rows = () => page.$$eval('#tasks li', (lis: any[]) => lis.map((li) => ({
    ulid: li.getAttribute('data-ulid'), n: li.querySelector('.num').textContent, who: li.querySelector('.recipient').textContent,
    addr: li.querySelector('.addr').textContent, status: li.querySelector('.badge').textContent, when: li.querySelector('.when').textContent,
    eta: li.querySelector('.eta')?.getAttribute('data-eta') ?? null,
  })))
  const first = await rows()
  t.same(first.map((r) => [r.ulid, r.n, r.who, r.status]), [
    [a, '1', people[0], 'Complete'], [b, '2', people[1], 'Failed'], [c, '3', people[2], 'Pending'], [stops[3], '4', people[3], 'Pending'], [stops[4], '5', people[4], 'Pending'],
  ], 'each stop in order: its position, recipient and status')
  t.equal(first[2]!.addr, 'Sarmiento 1174, 3 B, S2000 Rosario', 'the address line')
  t.match(first[2]!.when, /^Window \d\d:\d\d–\d\d:\d\d · ETA \d\d:\d\d \(\d\d:\d\d–\d\d:\d\d\)$/, 'window and ETA')
  t.equal(first[0]!.eta, null, 'a done stop has no ETA')
  t.equal(await page.getAttribute('#bar', 'aria-valuenow'), '40')
  const widths = await page.evaluate(() => ['complete', 'failed', 'started'].map((k) => document.getElementById('seg-' + k).style.width))
  t.same(widths, ['20%', '20%', '0%'], 'complete and failed are separate parts of the bar')
  t.not(await page.evaluate(() => getComputedStyle(document.getElementById('seg-failed')).backgroundImage), 'none', 'failed is drawn red-striped, not green')
  t.equal(await page.$$eval('#map-stops .stop-mark', (l: any[]) => l.length), 5, 'every stop on the map')
  t.equal(await page.$$eval('#map-driver circle', (l: any[]) => l.length), 2, 'the driver on the map')
  t.same(await axeProblems(page), [], 'axe: no serious or critical violation at 1280 px')
  await page.screenshot({ path: `${SHOTS}/live-route-page-1280.png`, fullPage: true })
  await page.setViewportSize({ width: 390, height: 844 })
  await page.screenshot({ path: `${SHOTS}/live-route-page-390.png`, fullPage: true })
  t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 392), 'nothing wider than a phone at 390 px')
  t.same(await axeProblems(page), [], 'axe: no serious or critical violation at 390 px')
  await page.setViewportSize({ width: 1280, height: 900 })

  // A status change through the API.
  t.equal((await w.transition(c!, 'start', undefined, w.driver.token)).statusCode, 200)
  await page.waitForFunction((u) => document.querySelector(`#tasks li[data-ulid="${u}"] .badge`)?.textContent === 'On the way', c)
  // A driver's position through the API: it moves on the map, and the ETAs move with it.
  const before = await rows()
  const driverAt = () => page.evaluate(() => document.querySelector('#map-driver circle:last-child')?.getAttribute('cx') + ',' + document.querySelector('#map-driver circle:last-child')?.getAttribute('cy'))
  const dot0 = await driverAt()
  t.equal((await w.report([north(-8)])).statusCode, 202)
  await page.waitForFunction((p) => /-33\.02/.test(document.getElementById('driver-position').textContent), north(-8).lat.toFixed(4))
  t.not(await driverAt(), dot0, 'the driver\'s mark moved')
  await page.waitForFunction((prev) => document.querySelector(`#tasks li[data-ulid="${prev.u}"] .eta`)?.getAttribute('data-eta') !== prev.eta,
    { u: stops[4], eta: before[4]!.eta }, { timeout: 15_000 })
  t.ok(Date.parse((await rows())[4]!.eta!) > Date.parse(before[4]!.eta!), 'the ETA moved later as the driver went away')

  // A stop added to the route: it appears; its recipient, named like markup, is text.
  const evil = await w.taskAt(9, { address: addressAt(north(9), { name: XSS }) })
  t.equal((await w.api('POST', `/routes/${id}/tasks`, { task_ulids: [evil] })).statusCode, 200)
  await page.waitForFunction(() => document.querySelectorAll('#tasks li').length === 6)
  t.same((await rows())[5]!.who, XSS, 'shown as the text it is')
  t.equal(await page.$$eval('#tasks img, #route-name img, svg img', (l: any[]) => l.length), 0, 'no element made from it')
  await page.waitForTimeout(300)
  t.notOk(dialog, 'no script ran from the data')
  t.same(outside, [], 'no request left the server\'s origin')
  await page.close()

  t.test('the page\'s data: that route alone, only with its link', async (t) => {
    const token = path.split('/').pop()!
    const data = await fetch(`${base}/live/routes/${token}/data`)
    t.equal(data.status, 200)
    t.equal(data.headers.get('cache-control'), 'no-store')
    t.equal(data.headers.get('referrer-policy'), 'no-referrer')
    const body = await data.json() as any
    t.same(body.stops.map((s: any) => s.ulid).slice(0, 5), stops)
    t.equal(body.stops[5].recipient, XSS, 'stored as sent; shown as text')
    t.notOk(JSON.stringify(body).includes('@example.com'), 'no email')
    t.notOk(JSON.stringify(body).includes(w.driver.id), 'no internal user id')
    const [route, expires, sig] = token.split('.')
    const altered = `${route}.${expires}.${(sig![0] === 'A' ? 'B' : 'A') + sig!.slice(1)}`
    for (const bad of [altered, `${Number(route) + 1}.${expires}.${sig}`, 'nonsense', `${route}.${Number(expires) + 3600}.${sig}`]) {
      const r = await fetch(`${base}/live/routes/${bad}/data`)
      t.equal(r.status, 404, `refused: ${bad.slice(0, 20)}`)
      t.notMatch(await r.text(), people[0]!)
    }
  })
})

t.test('with MAP_TILE_URL: Leaflet from this server, tiles from that host beneath the marks; nothing else from outside', async (t) => {
  const tileRequests: string[] = []
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')
  const tileServer = http.createServer((req, res) => { tileRequests.push(req.url!); res.writeHead(200, { 'content-type': 'image/png' }).end(png) })
  await new Promise<void>((ok) => tileServer.listen(0, '127.0.0.1', ok))
  t.teardown(() => new Promise<void>((ok) => tileServer.close(() => ok())))
  const tileOrigin = `http://localhost:${(tileServer.address() as AddressInfo).port}`
  const h = await build(t, { sseHeartbeatMs: 60_000, mapTileUrl: `${tileOrigin}/{z}/{x}/{y}.png` })
  const base = await listen(h.app)
  const w = await etaWorld(h, { background: false })
  const ulids = [await w.taskAt(1), await w.taskAt(2)]
  const id = await w.route(ulids)
  const path = new URL((await w.api('POST', `/routes/${id}/live-links`, {})).json().url).pathname
  const browser = await launch()
  t.teardown(() => browser.close())
  const page = await browser.newPage({ viewport: { width: 900, height: 800 } })
  const outside = outsideRequests(page, base)
  const response = await page.goto(`${base}${path}`)
  const csp = response!.headers()['content-security-policy']!
  t.match(csp, `img-src data: ${tileOrigin}`, 'images from the tile host')
  t.match(csp, /script-src 'unsafe-inline' 'self';/, 'scripts from this server only')
  await page.waitForFunction(() => window.L && document.querySelectorAll('#tiles .leaflet-tile-loaded').length > 0, undefined, { timeout: 15_000 })
  t.ok(tileRequests.length > 0, 'tiles were asked for')
  t.ok(outside.length > 0 && outside.every((u) => u.startsWith(`${tileOrigin}/`)), 'only the tile host besides this server')
  t.equal(await page.$$eval('#tiles path.leaflet-interactive', (l: any[]) => l.length) >= 2, true, 'the stops drawn as SVG over the tiles')
  const asset = await fetch(`${base}/live/assets/leaflet.js`)
  t.equal(asset.status, 200)
  t.match(asset.headers.get('content-type'), /javascript/)
  t.equal((await fetch(`${base}/live/assets/..%2Fpackage.json`)).status, 404, 'only the two files')
})

t.test('an altered or expired link shows nothing; a page left open when its link expires clears the route', async (t) => {
  const h = await build(t, { sseHeartbeatMs: 60_000 })
  const base = await listen(h.app)
  const w = await progressWorld(h)
  const [b, c] = await w.tasks(2)
  const id = await w.route({ tasks: [b!, c!], publish: true })
  const browser = await launch()
  t.teardown(() => browser.close())
  const path = new URL((await h.call('POST', `/api/v1/routes/${id}/live-links`, { token: w.carrier.token, body: { ttl_minutes: 60 } })).json().url).pathname
  const [route, expires, sig] = path.split('/').pop()!.split('.')
  const altered = `${route}.${expires}.${(sig![0] === 'A' ? 'B' : 'A') + sig!.slice(1)}`
  const expired = signLiveToken(liveLinkKey(h.platform.secretsKey), id, w.carrier.id, new Date(Date.now() - 60_000))
  for (const [what, token] of [['altered', altered], ['expired', expired]] as const) {
    const p = await browser.newPage()
    const res = await p.goto(`${base}/live/routes/${token}`)
    t.equal(res?.status(), 404, what)
    t.equal(res?.headers()['referrer-policy'], 'no-referrer')
    await p.waitForTimeout(300)
    const text = await p.textContent('body')
    t.match(text, /expired or invalid/i, what)
    for (const ulid of [b, c]) t.notMatch(text, ulid!, `${what}: no task shown`)
    t.equal(await p.$$eval('li', (l: any[]) => l.length), 0, `${what}: no list`)
    await p.close()
  }

  // A route's state from its frame: a blocked reason shaped like markup stays text.
  const open = await browser.newPage()
  await open.goto(`${base}${path}`)
  await open.waitForFunction(() => document.querySelectorAll('#tasks li').length === 2)
  await w.routeEvent(id, 'RouteBlocked', { reason: '<img src=x onerror="window.pwned=1">', blocked_at: new Date().toISOString() })
  await open.waitForFunction(() => document.getElementById('route-status').textContent.startsWith('Blocked'))
  t.equal(await open.textContent('#route-status'), 'Blocked: <img src=x onerror="window.pwned=1">', 'the reason, as text')
  t.equal(await open.$$eval('header img', (l: any[]) => l.length), 0)
  t.notOk(await open.evaluate(() => window.pwned), 'data never becomes markup')
  t.equal((await w.transition(b!, 'complete', { signed_by: 'Bo' })).statusCode, 200)
  await open.waitForFunction((u) => document.querySelector(`#tasks li[data-ulid="${u}"] .badge`)?.textContent === 'Complete', b)
  t.equal(await open.getAttribute('#bar', 'aria-valuenow'), '50', 'the progress from the frame')
  await open.close()

  const soon = signLiveToken(liveLinkKey(h.platform.secretsKey), id, w.carrier.id, new Date(Math.ceil((Date.now() + 2500) / 1000) * 1000))
  const p = await browser.newPage()
  await p.goto(`${base}/live/routes/${soon}`)
  await p.waitForFunction(() => document.querySelectorAll('#tasks li').length === 2)
  await p.waitForFunction(() => /expired/.test(document.getElementById('state').textContent ?? ''), undefined, { timeout: 15_000 })
  t.equal(await p.$$eval('#tasks li', (l: any[]) => l.length), 0)
  t.equal(await p.textContent('#driver'), '')
  await p.close()
})
