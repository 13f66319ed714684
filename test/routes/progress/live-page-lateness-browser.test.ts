import { mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import t from 'tap'
import { chromium, type Browser, type Page } from 'playwright-core'
import { launch, axeProblems } from '../../helpers/browser.js'
import { build } from '../../helpers/build.js'
import { listen } from './fixtures.js'
import { addressAt, etaWorld, north, until } from '../../etas/fixtures.js'

// Issue 37, the dispatcher's live page in a real Chromium: late stops first (a count in the header,
// a "late now" list above everything, each marked in colour and word, "late 47 min", with its window
// and ETA side by side), "at stop for N min" at the stop the driver is at, the driver's heading and
// the age of its position, every time in the organization's time zone and the page says which.
// Status, ETA and position changes seen live; axe-core clean; screenshots in docs/screenshots.

declare const document: any
declare const window: any

const SHOTS = 'docs/screenshots'
const ZONE = 'Europe/Madrid'

const isoIn = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString()
const hhmm = (iso: string) => new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: ZONE }).format(new Date(iso))

t.test('the live page puts late stops first, in the organization\'s time zone; at stop, heading and age; live changes', async (t) => {
  const h = await build(t, { sseHeartbeatMs: 60_000 })
  const base = await listen(h.app)
  const w = await etaWorld(h)
  t.equal((await w.api('PATCH', '/organizations/my/settings', { time_zone: ZONE })).statusCode, 200)
  const stop = (km: number, name: string, street: string, window: { from: string; to: string }) =>
    w.taskAt(km, { address: addressAt(north(km), { name, street, street_number: String(100 + Math.round(km * 10)) }), time_windows: [window] })
  const wide = { from: isoIn(-60), to: isoIn(240) }
  const atDoor = await stop(1, 'Lucía Fernández', 'Córdoba', wide)
  const near = await stop(2.5, 'Martín Ríos', 'Mitre', wide)
  const far = await stop(20, 'Carla Domínguez', 'Sarmiento', { from: isoIn(-60), to: isoIn(20) })
  const farther = await stop(22, 'Juan Pérez', 'Urquiza', { from: isoIn(-30), to: isoIn(30) })
  // In this order: the two far stops come before the near one, which has all afternoon.
  const res = await w.api('POST', '/routes', { name: 'Rosario north · afternoon', shift_date: new Date().toISOString().slice(0, 10), driver_id: w.driver.id, task_ulids: [atDoor, far, farther, near], start_address: addressAt(north(0)) })
  t.equal(res.statusCode, 201, res.body)
  const id = res.json().route.id as number
  t.equal((await w.api('POST', `/routes/${id}/publish`)).statusCode, 200)
  t.equal((await w.report([{ ...north(0.9), heading: 45 } as any])).statusCode, 202)
  t.equal((await w.transition(atDoor, 'start', undefined, w.driver.token)).statusCode, 200)
  await w.started(id)
  t.equal((await w.transition(atDoor, 'arrive', undefined, w.driver.token)).statusCode, 200)
  const r = await w.routeWhen(id, (x) => x.late_stops === 2, 'two late stops')

  const path = new URL((await w.api('POST', `/routes/${id}/live-links`, { ttl_minutes: 60 })).json().url).pathname
  const browser = await launch()
  t.teardown(() => browser.close())
  mkdirSync(SHOTS, { recursive: true })
  // The dispatcher's browser is elsewhere: the page follows the organization's zone, not the browser's.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: 'America/Los_Angeles' })
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (e: any) => errors.push(String(e)))
  await page.goto(`${base}${path}`)
  await page.waitForFunction(() => document.querySelectorAll('#tasks li').length === 4 && document.querySelectorAll('#late-list li').length === 2)

  t.equal(await page.textContent('#late-count'), '2 late', 'the header counts the late stops')
  t.equal(await page.textContent('#zone'), `Times in ${ZONE}`)
  t.equal(await page.textContent('#attention-title'), '2 stops late now')
  t.ok(await page.evaluate(() => {
    const main = document.querySelector('main')
    return main.firstElementChild.id === 'attention' && document.getElementById('attention').getBoundingClientRect().top < document.getElementById('tasks').getBoundingClientRect().top
  }), 'the late stops come first on the page')
  const readLate = () => page.$$eval('#late-list li', (lis: any[]) => lis.map((li) => ({ ulid: li.getAttribute('data-ulid'), tag: li.querySelector('.late-tag').textContent, times: li.querySelector('.times').textContent })))
  const timesOf = (eta: any) => `Window ${hhmm(eta.window.from)}–${hhmm(eta.window.to)} · ETA ${hhmm(eta.at)} (${hhmm(eta.from)}–${hhmm(eta.to)})`
  // The engine restates the ETAs while the page is read: compare the page with the route as it is once the two agree (or the last try's).
  let lateRows = await readLate()
  let byUlid = new Map(r.tasks.map((x: any) => [x.ulid, x]))
  await until(async () => {
    lateRows = await readLate()
    byUlid = new Map((await w.getRoute(id)).tasks.map((x: any) => [x.ulid, x]))
    return lateRows.every((row) => row.times === timesOf((byUlid.get(row.ulid) as any).eta))
  }, 15_000, 'the page and the route agree').catch(() => undefined)
  t.same(lateRows.map((x) => x.ulid).sort(), [far, farther].sort())
  for (const row of lateRows) {
    const eta = (byUlid.get(row.ulid) as any).eta
    t.match(row.tag, /^late \d+ min$/, 'a word and a number')
    t.equal(row.times, `Window ${hhmm(eta.window.from)}–${hhmm(eta.window.to)} · ETA ${hhmm(eta.at)} (${hhmm(eta.from)}–${hhmm(eta.to)})`, 'window and ETA side by side, in the organization\'s zone')
  }
  const listed = await page.$$eval('#tasks li', (lis: any[]) => lis.map((li) => ({
    ulid: li.getAttribute('data-ulid'), late: li.classList.contains('late'), tag: li.querySelector('.late-tag')?.textContent ?? null,
    atStop: li.querySelector('.at-stop')?.textContent ?? null, colour: window.getComputedStyle(li.querySelector('.num')).backgroundColor,
  })))
  t.same(listed.map((x) => x.late), [false, true, true, false], 'the late stops are marked in the route\'s list')
  t.equal(listed[1]!.colour, 'rgb(179, 38, 30)', 'in red')
  t.not(listed[3]!.colour, listed[1]!.colour, 'not the colour of a stop on time')
  t.match(listed[0]!.atStop, /^At stop for \d+ min$/, 'the stop the driver is at')
  t.equal(await page.getAttribute('#driver-heading', 'transform'), await page.evaluate(() => {
    const c = document.querySelector('#map-driver circle:last-child'); return `rotate(45 ${c.getAttribute('cx')} ${c.getAttribute('cy')})`
  }), 'the marker points the way the driver faces')
  t.match(await page.textContent('#driver-age'), /ago$/, 'the position\'s age beside the marker')
  t.match(await page.textContent('#driver-position'), /^Driver’s last position (less than a minute|\d+ min) ago \(\d\d:\d\d\), heading north-east \(45°\)/)

  t.same(await axeProblems(page), [], 'axe: no serious or critical violation at 1280 px')
  await page.screenshot({ path: `${SHOTS}/live-late-stops-1280.png`, fullPage: true })
  await page.setViewportSize({ width: 390, height: 844 })
  t.same(await axeProblems(page), [], 'axe at 390 px')
  await page.screenshot({ path: `${SHOTS}/live-late-stops-390.png`, fullPage: true })
  t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 392), 'nothing wider than a phone')
  await page.setViewportSize({ width: 1280, height: 900 })

  // A status change: the driver finishes at the door; "at stop" goes.
  t.equal((await w.transition(atDoor, 'complete', { signed_by: 'Lucía' }, w.driver.token)).statusCode, 200)
  await page.waitForFunction((u: string) => document.querySelector(`#tasks li[data-ulid="${u}"] .badge`)?.textContent === 'Complete', atDoor, { timeout: 20_000 })
  t.equal(await page.$$eval('.at-stop', (l: any[]) => l.length), 0)
  // A position and ETA change: the driver turns up by the late stops, which are on time again.
  const dot = await page.evaluate(() => document.querySelector('#map-driver circle:last-child').getAttribute('cy'))
  t.equal((await w.report([{ ...north(19.9), heading: 0 } as any])).statusCode, 202)
  await page.waitForFunction(() => document.getElementById('late-count').hidden && document.getElementById('attention').hidden, undefined, { timeout: 20_000 })
  t.equal(await page.$$eval('#tasks li.late', (l: any[]) => l.length), 0, 'no stop marked late')
  t.not(await page.evaluate(() => document.querySelector('#map-driver circle:last-child').getAttribute('cy')), dot, 'the marker moved')
  t.match(await page.textContent('#driver-position'), /heading north \(0°\)/)
  t.same(errors, [], 'no script error')
})
