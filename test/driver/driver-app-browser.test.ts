import { mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { Writable } from 'node:stream'
import t from 'tap'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { launch, axeProblems } from '../helpers/browser.js'
import { build } from '../helpers/build.js'
import { listen } from '../routes/progress/fixtures.js'
import { addressAt, etaWorld, north, until } from '../etas/fixtures.js'

// Issue 38: the driver's app as a driver meets it, in a phone-sized Chromium: signed in by a link,
// a started route driven with emulated geolocation, a stop completed with a drawn signature and a
// photo, three stops done without network, a stop the dispatcher removed meanwhile, a stop added
// live, and the driver deactivated meanwhile.

// The functions below run in the page (the project's types carry no DOM library).
declare const document: any
declare const window: any
declare const localStorage: any

const PHOTO = readFileSync(new URL('../../src/driver/public/icon-192.png', import.meta.url))
const isoIn = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString()

/** A phone: 360 px wide, touch, geolocation allowed and at `at`. */
const phone = (browser: Browser, at: { lat: number; lng: number }, width = 360): Promise<BrowserContext> => browser.newContext({
  viewport: { width, height: 760 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true,
  geolocation: { latitude: at.lat, longitude: at.lng, accuracy: 8 }, permissions: ['geolocation'],
})

t.test('the driver\'s app: sign in by link, drive, prove, work offline, follow the dispatcher, be signed out', async (t) => {
  let logs = ''
  const stream = new Writable({ write(chunk, _enc, cb) { logs += String(chunk); cb() } })
  const h = await build(t, { sseHeartbeatMs: 60_000 }, {}, { logger: { level: 'info', stream } })
  const base = await listen(h.app)
  const w = await etaWorld(h)
  const people = ['Lucía Fernández', 'Sofía Benítez', 'Martín Ríos', 'Carla Domínguez', 'Juan Pérez']
  const stops: string[] = []
  for (const [i, name] of people.entries()) {
    stops.push(await w.taskAt(1.2 * (i + 1), {
      address: addressAt(north(1.2 * (i + 1)), { name, street: ['Córdoba', 'Mitre', 'Sarmiento', 'Urquiza', 'Entre Ríos'][i], street_number: String(1100 + 37 * i), phone: `+54 341 555 010${i}`, zipcode: 'S2000' }),
      time_windows: [{ from: isoIn(-30 + 20 * i), to: isoIn(60 + 20 * i) }],
      ...(i === 0 ? { requirements: { complete: ['signature', 'photo'] } } : {}),
    }))
  }
  const routeId = await w.route(stops)
  const browser = await launch()
  t.teardown(() => browser.close())
  mkdirSync('docs', { recursive: true })

  // The dispatcher sends a link; the phone opens it.
  const made = await w.api('POST', `/users/${w.driver.id}/sign-in-links`)
  t.equal(made.statusCode, 201, made.body)
  const { code, url } = made.json().sign_in_link
  const ctx = await phone(browser, north(0))
  const page = await ctx.newPage()
  const outside: string[] = []
  page.on('request', (r) => { const u = r.url(); if (!u.startsWith(base) && !u.startsWith('data:') && !u.startsWith('blob:')) outside.push(u) })
  const res = await page.goto(`${base}/driver${new URL(url).hash}`)
  t.equal(res?.status(), 200)
  const csp = res!.headers()['content-security-policy']!
  t.match(csp, /default-src 'none'/)
  t.match(csp, /script-src 'self';/)
  t.notMatch(csp, /unsafe-inline|https?:/, 'no inline script, no outside origin')
  await page.waitForSelector('.next .recipient')

  t.test('signed in: the token kept on the phone, the code in no address, history or log', async (t) => {
    t.equal(page.url(), `${base}/driver`, 'the code left the address bar')
    const kept = await page.evaluate(() => JSON.parse(localStorage.getItem('driver.session')))
    t.match(kept, { user: { id: w.driver.id, name: 'Dana Driver' } })
    t.match(kept.access_token, /^sk_/)
    t.equal((await w.api('GET', '/routes', undefined, kept.access_token)).statusCode, 200, 'the phone\'s token is the driver\'s')
    t.equal((await w.api('GET', '/users', undefined, kept.access_token)).statusCode, 403, 'and reaches no more than a driver\'s')
    t.notOk(logs.includes(code) || logs.includes(code.replace(/-/g, '')), 'no log line holds the code')
    t.notOk(logs.includes(kept.access_token), 'no log line holds the token')
    t.ok(logs.includes('/driver/sign-in'), 'the sign-in was logged, without its body')
    t.equal((await h.call('POST', '/driver/sign-in', { body: { code } })).statusCode, 401, 'the link is spent')
  })

  t.test('today\'s route: stops in order, the next first, navigate and call', async (t) => {
    t.equal(await page.textContent('.next .recipient'), people[0])
    const rows = await page.$$eval('ol.stops li', (lis: any[]) => lis.map((li) => [li.getAttribute('data-ulid'), li.querySelector('.num').textContent, li.querySelector('.recipient').textContent]))
    t.same(rows, stops.map((u, i) => [u, String(i + 1), people[i]]))
    const nav = await page.getAttribute('.next a.nav', 'href')
    const p = north(1.2)
    t.match(nav, new RegExp(`^geo:${p.lat},${p.lng}\\?q=`), 'Navigate opens the phone\'s maps at the stop')
    t.match(await page.getAttribute('.next a[href^="https://www.google.com/maps"]', 'href'), /destination=/, 'with a web map beside it')
    t.equal(await page.getAttribute('.next a[href^="tel:"]', 'href'), 'tel:+543415550100')
    t.match(await page.textContent('.next .when'), /^Window \d\d:\d\d–\d\d:\d\d/)
    t.equal(await page.getAttribute('#sharing', 'data-state'), 'off', 'no location shared before the route is under way')
  })

  await t.test('on the way: the route starts and the phone\'s positions reach the API and the dispatcher\'s live page', async (t) => {
    await page.click('.next button[data-action="start"]')
    await w.started(routeId)
    await page.waitForSelector('#sharing[data-state="on"]')
    t.match(await page.textContent('#sharing'), /Sharing location/)
    const positions = async () => (await w.api('GET', `/users/${w.driver.id}/positions`)).json().data as Array<{ lat: number; lng: number }>
    await until(async () => (await positions()).some((x) => Math.abs(x.lat - north(0).lat) < 1e-6), 20_000, 'the first position')
    const live = (await w.api('POST', `/routes/${routeId}/live-links`, { ttl_minutes: 60 })).json().url as string
    const dispatcher = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    t.teardown(() => dispatcher.close())
    await dispatcher.goto(`${base}${new URL(live).pathname}`)
    await dispatcher.waitForSelector('#tasks li')
    const moved = north(0.6)
    await ctx.setGeolocation({ latitude: moved.lat, longitude: moved.lng, accuracy: 8 })
    await until(async () => (await positions()).some((x) => Math.abs(x.lat - moved.lat) < 1e-6), 20_000, 'the moved position')
    await dispatcher.waitForFunction((lat: string) => document.getElementById('driver-position').textContent.includes(lat), moved.lat.toFixed(4), { timeout: 20_000 })
    t.pass('the dispatcher\'s live page shows where the phone is')
  })

  await t.test('complete with a drawn signature and a photo: the button says what is missing until both are there', async (t) => {
    await page.click('.next button[data-action="arrive"]')
    await until(async () => (await w.api('GET', `/tasks/${stops[0]}`)).json().status === 'arrived', 15_000, 'arrived')
    await page.click('.next button[data-action="complete"]')
    const submit = page.locator('.next form.proof button[type="submit"]')
    t.ok(await submit.isDisabled())
    t.match(await page.textContent('.next form.proof .why'), /Still needed: signature and name, photo/)
    const box = (await page.locator('.next canvas.signature').boundingBox())!
    await page.mouse.move(box.x + 20, box.y + box.height * 0.7)
    await page.mouse.down()
    for (let i = 1; i <= 12; i++) await page.mouse.move(box.x + 20 + i * (box.width - 40) / 12, box.y + box.height * (0.7 - 0.4 * Math.abs(Math.sin(i))))
    await page.mouse.up()
    await page.fill('.next input[name="signed_by"]', 'Lucía F.')
    t.match(await page.textContent('.next form.proof .why'), /Still needed: photo/)
    await page.setInputFiles('.next input[name="photo"]', { name: 'door.png', mimeType: 'image/png', buffer: PHOTO })
    await page.waitForFunction(() => !document.querySelector('.next form.proof button[type="submit"]').disabled)
    await page.screenshot({ path: 'docs/driver-app-proof-360.png', fullPage: false })
    await submit.click()
    const done = await until(async () => (await w.api('GET', `/tasks/${stops[0]}`)).json().status === 'complete', 15_000, 'completed')
    void done
    const task = (await w.api('GET', `/tasks/${stops[0]}`)).json()
    t.equal(task.signed_by, 'Lucía F.')
    t.same(task.attachments.map((a: any) => [a.description, a.content_type]).sort(), [['photo', 'image/png'], ['signature', 'image/png']])
    await page.waitForFunction((u: string) => document.querySelector('.next')?.getAttribute('data-ulid') === u, stops[1]!)
  })

  await t.test('offline: three stops done without network, sent in order once it returns; the removed one is a conflict, shown', async (t) => {
    await ctx.setOffline(true)
    await page.waitForFunction(() => document.getElementById('net').textContent === 'Offline')
    // The dispatcher takes stop 4 off the route meanwhile; the phone cannot know.
    t.equal((await w.api('DELETE', `/routes/${routeId}/tasks/${stops[3]}`)).statusCode, 200)
    for (const ulid of [stops[1], stops[2], stops[3]]) {
      await page.waitForFunction((u: string) => document.querySelector('.next')?.getAttribute('data-ulid') === u, ulid!)
      await page.click('.next button[data-action="complete"]')
      await page.click('.next form.proof button[type="submit"]')
      await page.waitForSelector(`ol.stops li[data-ulid="${ulid}"] .badge.waiting`)
    }
    t.match(await page.textContent('#sync'), /3 waiting to send/)
    t.equal(await page.textContent(`ol.stops li[data-ulid="${stops[1]}"] .badge.waiting`), 'Waiting to send')
    await page.evaluate(() => window.scrollTo(0, 0))
    await page.screenshot({ path: 'docs/driver-app-offline-360.png', fullPage: true })
    for (const u of [stops[1], stops[2]]) t.equal((await w.api('GET', `/tasks/${u}`)).json().status, 'pending', 'nothing reached the API while offline')

    await ctx.setOffline(false)
    await page.waitForSelector('#conflicts:not([hidden]) li', { timeout: 30_000 })
    t.match(await page.textContent('#conflicts li'), /Stop 4: it was removed from your route meanwhile; “Complete” was not recorded\./)
    await page.waitForFunction(() => !document.querySelector('.badge.waiting'), undefined, { timeout: 30_000 })
    const after = await Promise.all([stops[1], stops[2], stops[3]].map(async (u) => (await w.api('GET', `/tasks/${u}`)).json()))
    t.same(after.map((x) => x.status), ['complete', 'complete', 'pending'])
    t.ok(Date.parse(after[0].completed_at) < Date.parse(after[1].completed_at), 'in the order done')
    for (const u of [stops[1], stops[2]]) {
      const events = await h.platform.store.readStream(`task-${u}`)
      t.equal(events.filter((e) => e.type === 'TaskCompleted').length, 1, 'completed exactly once')
    }
    await page.waitForFunction((u: string) => !document.querySelector(`ol.stops li[data-ulid="${u}"]`), stops[3]!)
    t.equal(await page.getAttribute('.next', 'data-ulid'), stops[4], 'the removed stop is gone, the next one is next')
    await page.click('#conflicts button')
    await page.waitForSelector('#conflicts', { state: 'hidden' })
  })

  await t.test('live: a stop the dispatcher adds appears without reload', async (t) => {
    const added = await w.taskAt(8, { address: addressAt(north(8), { name: 'Nueva Parada', street: 'Oroño', street_number: '900' }) })
    t.equal((await w.api('POST', `/routes/${routeId}/tasks`, { task_ulids: [added], position: 4 })).statusCode, 200)
    await page.waitForSelector(`ol.stops li[data-ulid="${added}"]`, { timeout: 20_000 })
    t.equal(await page.$$eval('ol.stops li .recipient', (l: any[]) => l.map((x) => x.textContent).at(-2)), 'Nueva Parada')
  })

  await t.test('one hand, two phones: axe finds nothing serious; screenshots at 360 and 390 px', async (t) => {
    t.same(await axeProblems(page), [], 'axe at 360 px')
    t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 362), 'nothing wider than the phone')
    await page.evaluate(() => window.scrollTo(0, 0))
    await page.screenshot({ path: 'docs/driver-app-360.png', fullPage: true })
    await page.click('.next button[data-action="fail"]')
    await page.screenshot({ path: 'docs/driver-app-fail-360.png', fullPage: false })
    await page.click('.next form.proof details.more summary')
    t.same(await axeProblems(page), [], 'axe at 360 px, failure form open with every proof field')
    await page.click('.next form.proof button.secondary')
    await page.setViewportSize({ width: 390, height: 844 })
    t.same(await axeProblems(page), [], 'axe at 390 px')
    await page.evaluate(() => window.scrollTo(0, 0))
    await page.screenshot({ path: 'docs/driver-app-390.png', fullPage: true })
    t.same(outside, [], 'no request left the platform')
  })

  await t.test('installable: a manifest with icons, and a service worker that opens the app without network', async (t) => {
    const manifest: any = await (await fetch(`${base}/driver/manifest.webmanifest`)).json()
    t.match(manifest, { start_url: '/driver', display: 'standalone' })
    t.ok(manifest.icons.some((i: any) => i.sizes === '512x512'))
    await page.waitForFunction(async () => (await navigator.serviceWorker.getRegistration('/driver'))?.active?.state === 'activated', undefined, { timeout: 15_000 })
    await ctx.setOffline(true)
    await page.reload()
    await page.waitForSelector('.next .recipient')
    t.match(await page.textContent('#sync'), /Offline: showing the route as of/, 'the route, from the last sync, without network')
    await ctx.setOffline(false)
  })

  await t.test('a driver deactivated meanwhile is signed out at the next request', async (t) => {
    t.equal((await w.api('POST', `/users/${w.driver.id}/deactivate`)).statusCode, 200)
    await page.evaluate(() => window.dispatchEvent(new Event('online')))
    await page.waitForSelector('#signin:not([hidden])', { timeout: 15_000 })
    t.match(await page.textContent('#signin-error'), /You were signed out/)
    t.equal(await page.evaluate(() => localStorage.getItem('driver.session')), null, 'the token left the phone')
  })
})

declare const navigator: any
declare const Event: any

t.test('in the organization\'s Spanish; a stop waiting on another says why its buttons are disabled; a typed code signs in', async (t) => {
  const h = await build(t)
  const base = await listen(h.app)
  const made = await h.admin('POST', '/organizations', { name: 'Rápido SA', subdomain: `rapido-${process.pid}`, roles: ['carrier'], locale: 'es-AR', timezone: 'America/Argentina/Cordoba' })
  t.equal(made.statusCode, 201, made.body)
  const ct = made.json().access_token as string
  const api = (method: string, path: string, body?: unknown) => h.call(method, `/api/v1${path}`, { token: ct, ...(body !== undefined ? { body } : {}) })
  const driver = (await api('POST', '/users', { name: 'Dante Chofer', email: 'dante@example.com', role: 'driver' })).json().user
  const first = (await api('POST', '/tasks', { type: 'delivery', address: addressAt(north(1), { name: 'Primera Casa' }) })).json().task.ulid
  const second = (await api('POST', '/tasks', { type: 'delivery', address: addressAt(north(2), { name: 'Segunda Casa' }), dependencies: [first] })).json().task.ulid
  const route = await api('POST', '/routes', { shift_date: new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Argentina/Cordoba' }).format(new Date()), driver_id: driver.id, task_ulids: [first, second], start_address: addressAt(north(0)) })
  t.equal(route.statusCode, 201, route.body)
  t.equal((await api('POST', `/routes/${route.json().route.id}/publish`)).statusCode, 200)
  const code = (await api('POST', `/users/${driver.id}/sign-in-links`)).json().sign_in_link.code as string

  const browser = await launch()
  t.teardown(() => browser.close())
  const ctx = await phone(browser, north(0))
  const page = await ctx.newPage()
  await page.goto(`${base}/driver`)
  await page.waitForSelector('#signin:not([hidden])')
  await page.fill('#code', 'WRONG-CODE-0000')
  await page.click('#signin-form button[type="submit"]')
  await page.waitForFunction(() => /not valid/.test(document.getElementById('signin-error').textContent))
  await page.fill('#code', code.toLowerCase())
  await page.click('#signin-form button[type="submit"]')
  await page.waitForSelector('.next .recipient')
  t.equal(await page.getAttribute('html', 'lang'), 'es')
  t.equal(await page.textContent('.next .kicker'), 'Próxima parada')
  t.equal(await page.textContent('.next .recipient'), 'Primera Casa')
  // The second stop's buttons: disabled, and saying why.
  await page.click(`ol.stops li[data-ulid="${second}"] summary`)
  const button = page.locator(`ol.stops li[data-ulid="${second}"] button[data-action="complete"]`)
  t.ok(await button.isDisabled())
  t.equal(await page.textContent(`ol.stops li[data-ulid="${second}"] .why`), 'Primero hay que terminar la parada 1.')
  t.equal(await button.getAttribute('aria-describedby'), `why-${second}`)
  t.same(await axeProblems(page), [], 'axe in Spanish')
})
