import { mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import t from 'tap'
import { chromium, type Browser, type Page } from 'playwright-core'
import { launch } from '../helpers/browser.js'
import { build } from '../helpers/build.js'
import { listen } from '../routes/progress/fixtures.js'
import { closeIdleConnections } from '../../src/notifications/safe-http.js'
import { north, trackingWorld } from './fixtures.js'

// The tracking page in a real headless Chromium (DESIGN §3.10, issue 24): a status change, an ETA
// change and a driver's position made through the API appear on the open page; data goes in as
// text; 360 px wide works; axe-core finds no serious or critical violation; screenshots at 1280 and
// 390 px under .local/screenshots/.

declare const document: any
declare const window: any
declare const axe: any

t.teardown(() => closeIdleConnections())

const SHOTS = '.local/screenshots'
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** axe-core's serious and critical violations on the page (run through DevTools, outside the page's CSP). */
async function violations(page: Page): Promise<string[]> {
  await page.evaluate(`${AXE}\n;undefined`)
  const result = await page.evaluate(() => axe.run(document, { resultTypes: ['violations'] }))
  return result.violations.filter((v: any) => v.impact === 'serious' || v.impact === 'critical').map((v: any) => `${v.id}: ${v.help} (${v.nodes.map((n: any) => n.target.join(' ')).join(', ')})`)
}

t.test('the tracking page in Chromium follows the delivery live, as text, at 360–1280 px, accessibly', async (t) => {
  mkdirSync(SHOTS, { recursive: true })
  const h = await build(t, { sseHeartbeatMs: 60_000, natsUrl: process.env.NATS_URL })
  const base = await listen(h.app)
  const w = await trackingWorld(h, { natsUrl: process.env.NATS_URL })
  t.teardown(() => w.bg?.stop())
  const browser = await launch()
  t.teardown(() => browser.close())
  const outside: string[] = []
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'en-US', timezoneId: 'America/Argentina/Cordoba' })
  const page = await context.newPage()
  page.on('request', (r: any) => { if (!r.url().startsWith(base)) outside.push(r.url()) })
  const errors: string[] = []
  page.on('pageerror', (e: any) => errors.push(String(e)))

  const res = await page.goto(`${base}${w.path}`)
  t.equal(res?.status(), 200)
  await page.waitForFunction(() => document.getElementById('status').textContent === 'Pending')
  t.match(await page.textContent('#carrier'), /^Shipped with /)
  t.ok(await page.isHidden('#delivery'), 'no delivery block before a route')
  t.match(await page.textContent('#promised'), /^Promised delivery: /)

  t.test('a status change through the API: the route starts, the shipment is out for delivery, the ETA window shows', async (t) => {
    const routeId = await w.route([w.before, w.delivery, w.after])
    t.equal((await w.report([north(0)])).statusCode, 202)
    t.equal((await w.transition(w.before, 'start', undefined, w.driver.token)).statusCode, 200)
    await w.started(routeId)
    await page.waitForFunction(() => document.getElementById('status').textContent === 'Out for delivery', undefined, { timeout: 15_000 })
    await page.waitForFunction(() => document.getElementById('eta').textContent.includes('–'), undefined, { timeout: 15_000 })
    t.equal(await page.textContent('#stops'), '1 stop before yours')
    t.equal(await page.textContent('#driver'), 'Your driver: Dana')
    t.ok(await page.isHidden('#map-box'), 'no map while another stop comes first')
    t.match(await page.textContent('#timeline'), /Out for delivery/)
  })

  t.test('an ETA change through the API: the driver reports a position far back, the window moves', async (t) => {
    const before = await page.textContent('#eta')
    t.equal((await w.report([north(-12)])).statusCode, 202)
    await page.waitForFunction((b: string | null) => document.getElementById('eta').textContent !== b, before, { timeout: 15_000 })
    t.not(await page.textContent('#eta'), before)
  })

  t.test('a driver position through the API: once this stop is next, the driver is on the map and moves', async (t) => {
    t.equal((await w.transition(w.before, 'complete', { signed_by: 'Vecino' }, w.driver.token)).statusCode, 200)
    t.equal((await w.report([north(1)])).statusCode, 202)
    await page.waitForFunction(() => document.getElementById('stops').textContent === 'Your delivery is the next stop', undefined, { timeout: 15_000 })
    await page.waitForFunction(() => document.getElementById('driver-dot') !== null, undefined, { timeout: 15_000 })
    const at = () => page.evaluate(() => Number(document.getElementById('driver-dot').getAttribute('cy')))
    const first = await at()
    t.match(await page.textContent('#distance'), /^3\.\d km away$/)
    t.equal((await w.report([north(3)])).statusCode, 202)
    await page.waitForFunction(() => /^1\.\d km away$/.test(document.getElementById('distance').textContent), undefined, { timeout: 15_000 })
    t.not(await at(), first, 'the dot moved')
    await page.screenshot({ path: `${SHOTS}/tracking-page-390.png`, fullPage: true })
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.screenshot({ path: `${SHOTS}/tracking-page-1280.png`, fullPage: true })
    await page.setViewportSize({ width: 360, height: 740 })
    t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 360), '360 px wide: nothing sticks out sideways')
    await page.setViewportSize({ width: 390, height: 844 })
  })

  t.test('axe-core: no serious or critical violation', async (t) => {
    t.same(await violations(page), [])
    const gone = await context.newPage()
    t.equal((await gone.goto(`${base}/track/not-a-token`))?.status(), 404)
    t.same(await violations(gone), [], 'the "not available" page too')
    await gone.close()
  })

  t.test('data goes into the page as text: a status named as markup shows as its characters', async (t) => {
    const markup = '<img src=x onerror="window.pwned=1">'
    t.equal((await w.api('PATCH', '/shipment-statuses/out_for_delivery', { name: markup })).statusCode, 200)
    await page.waitForFunction((m: string) => document.getElementById('status').textContent === m, markup, { timeout: 15_000 })
    t.equal(await page.$$eval('img', (l: any[]) => l.length), 0, 'no element made of it')
    t.notOk(await page.evaluate(() => window.pwned))
    t.ok((await page.textContent('#timeline'))!.includes(markup), 'in the timeline too, as text')
  })

  t.test('Spanish: a browser that prefers it', async (t) => {
    const es = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'es-AR' })
    const p = await es.newPage()
    await p.goto(`${base}${w.path}`)
    await p.waitForFunction(() => document.getElementById('stops').textContent === 'Tu entrega es la próxima parada', undefined, { timeout: 15_000 })
    t.equal(await p.getAttribute('html', 'lang'), 'es')
    t.match(await p.textContent('#carrier'), /^Enviado con /)
    t.equal(await p.textContent('#driver'), 'Tu repartidor: Dana')
    await es.close()
  })

  t.test('delivered: the page says so and drops the delivery block', async (t) => {
    t.equal((await w.transition(w.delivery, 'start', undefined, w.driver.token)).statusCode, 200)
    t.equal((await w.transition(w.delivery, 'complete', { signed_by: 'Rita' }, w.driver.token)).statusCode, 200)
    await page.waitForFunction(() => document.getElementById('status').textContent === 'Delivered', undefined, { timeout: 15_000 })
    t.ok(await page.isHidden('#delivery'))
  })

  t.same(outside, [], 'no outside request')
  t.same(errors, [], 'no script error')
})
