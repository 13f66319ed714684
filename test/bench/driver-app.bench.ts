// The driver's app (issue 38) on a phone profile, on the embedded default (PostgreSQL from npm, one
// platform process): Chromium at 360 px with its CPU slowed 4× (CDP Emulation.setCPUThrottlingRate)
// and DevTools' "Slow 3G" (CDP Network.emulateNetworkConditions: 2 s round trip, 50 kB/s each way).
//  - the shell's first paint and the route shown: the first visit (nothing on the phone), and the
//    app opened again once installed (its service worker answers the shell; the route is the copy
//    on the phone until the network answers): goal ≤ 2 s;
//  - what the shell costs on the wire (first visit: the page, its styles, scripts, manifest, icon);
//  - 20 stops completed offline, then the network back: time until the phone's queue is empty and
//    the API has all 20, on loopback and on Slow 3G.
// Run: bash test/bench/run-all.sh driver-app (or npx tsx test/bench/driver-app.bench.ts). BENCH_LOADS=7.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { chromium, type BrowserContext, type CDPSession, type Page } from 'playwright-core'
import { loadConfig } from '../../src/config.js'
import { createPlatform } from '../../src/platform.js'
import { buildApp } from '../../src/http/app.js'
import { modules } from '../../src/modules.js'
import { percentile } from './bench-database.js'

declare const document: any
declare const performance: any

const LOADS = Number(process.env['BENCH_LOADS'] ?? 7)
const QUEUED = 20
const ADMIN = 'bench-admin-token-driver'
const SLOW_3G = { latency: 2000, downloadThroughput: 50_000, uploadThroughput: 50_000 }

const work = mkdtempSync(join(tmpdir(), 'driver-app-bench-'))
chmodSync(work, 0o755)
const config = loadConfig({ DATA_DIR: join(work, 'data'), ADMIN_TOKEN: ADMIN, SECRETS_KEY: Buffer.alloc(32, 5).toString('base64'), RATE_LIMIT_PER_MINUTE: '0' })
const platform = await createPlatform(config)
const app = await buildApp(platform, { logger: false, modules })
await app.listen({ port: 0, host: '127.0.0.1' })
const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

const call = async (method: string, url: string, token: string, body?: unknown) => {
  const res = await app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}`, accept: 'application/json' }, ...(body !== undefined ? { payload: body as object } : {}) })
  if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
  return JSON.parse(res.body)
}
const carrier = await call('POST', '/admin/v1/organizations', ADMIN, { name: 'Correo Bench', subdomain: `driverbench${Date.now()}`, roles: ['carrier'] })
const ct = carrier.access_token as string

/** A driver with a published route of `n` stops today; returns the driver's id. */
async function driverWithRoute(n: number, name: string): Promise<string> {
  const driver = await call('POST', '/api/v1/users', ct, { name, email: `${name.replace(/\W/g, '').toLowerCase()}@bench.example`, role: 'driver' })
  const ulids: string[] = []
  for (let i = 0; i < n; i++) {
    const address = { name: `Recipient ${i + 1}`, street: 'San Martín', street_number: String(100 + i), city: 'Rosario', state: 'Santa Fe', country: 'AR', geo_latitude: -32.95 + i * 0.004, geo_longitude: -60.65 }
    ulids.push((await call('POST', '/api/v1/tasks', ct, { type: 'delivery', address, duration_minutes: 5 })).task.ulid)
  }
  const route = (await call('POST', '/api/v1/routes', ct, { shift_date: new Date().toISOString().slice(0, 10), driver_id: driver.user.id, task_ulids: ulids })).route
  await call('POST', `/api/v1/routes/${route.id}/publish`, ct)
  return driver.user.id
}
const signInPath = async (driverId: string) => `/driver${new URL((await call('POST', `/api/v1/users/${driverId}/sign-in-links`, ct)).sign_in_link.url).hash}`

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
})
const phone = () => browser.newContext({ viewport: { width: 360, height: 760 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true })

/** The phone profile on a page: CPU ×4, and Slow 3G (or, `net: false`, the loopback as it is). */
async function profile(page: Page, net = true): Promise<CDPSession> {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 })
  await cdp.send('Network.enable')
  if (net) await cdp.send('Network.emulateNetworkConditions', { offline: false, ...SLOW_3G })
  return cdp
}

const paintOf = (page: Page) => page.evaluate(`(() => {
  const fp = performance.getEntriesByName('first-paint')[0]
  const fcp = performance.getEntriesByName('first-contentful-paint')[0]
  const nav = performance.getEntriesByType('navigation')[0]
  const res = performance.getEntriesByType('resource').filter((r) => new URL(r.name).pathname.startsWith('/driver'))
  return { fp: fp ? fp.startTime : NaN, fcp: fcp ? fcp.startTime : NaN, transfer: nav.transferSize + res.reduce((s, r) => s + r.transferSize, 0),
    decoded: nav.decodedBodySize + res.reduce((s, r) => s + r.decodedBodySize, 0), files: 1 + res.length }
})()`) as Promise<{ fp: number; fcp: number; transfer: number; decoded: number; files: number }>

const routeShown = () => document.querySelector('.next .recipient') !== null
/** When the app drew the route first (its own mark), not when the bench got to look. */
const shownAt = (page: Page) => page.evaluate(`performance.getEntriesByName('driver:route-shown')[0].startTime`) as Promise<number>

interface Open { fp: number; fcp: number; shown: number; transfer: number; decoded: number; files: number }

/** A first visit: a fresh phone opens the sign-in link. */
async function firstVisit(driverId: string): Promise<{ open: Open; context: BrowserContext }> {
  const context = await phone()
  const page = await context.newPage()
  await profile(page)
  const path = await signInPath(driverId)
  await page.goto(`${base}${path}`, { waitUntil: 'load', timeout: 120_000 })
  await page.waitForFunction(routeShown, undefined, { timeout: 120_000, polling: 50 })
  const shown = await shownAt(page)
  await page.waitForFunction(() => performance.getEntriesByName('first-contentful-paint').length > 0, undefined, { timeout: 60_000 })
  const open = { ...(await paintOf(page)), shown }
  await page.close()
  return { open, context }
}

/** The installed app opened again: a new page of the same phone, its service worker in charge. */
async function reopen(context: BrowserContext): Promise<Open> {
  const page = await context.newPage()
  await profile(page)
  await page.goto(`${base}/driver`, { waitUntil: 'load', timeout: 120_000 })
  await page.waitForFunction(routeShown, undefined, { timeout: 120_000, polling: 50 })
  const shown = await shownAt(page)
  await page.waitForFunction(() => performance.getEntriesByName('first-contentful-paint').length > 0, undefined, { timeout: 60_000 })
  const open = { ...(await paintOf(page)), shown }
  await page.close()
  return open
}

const driverId = await driverWithRoute(12, 'Paint Driver')
const first: Open[] = []
const again: Open[] = []
for (let i = 0; i < LOADS; i++) {
  const { open, context } = await firstVisit(driverId)
  first.push(open)
  // The service worker installed during the first visit; wait until it is the one answering.
  const warm = await context.newPage()
  await warm.goto(`${base}/driver`)
  await warm.waitForFunction(`navigator.serviceWorker.ready.then((r) => r.active && r.active.state === 'activated')`, undefined, { timeout: 30_000 })
  await warm.close()
  again.push(await reopen(context))
  await context.close()
}

const requestTimes: number[] = []
/** 20 stops completed offline, then the network back: ms until the queue is empty and the API has all 20. */
async function drain(slow: boolean): Promise<number> {
  const id = await driverWithRoute(QUEUED, `Queue Driver ${slow ? 'slow' : 'fast'} ${Date.now()}`)
  const context = await phone()
  const page = await context.newPage()
  const cdp = await profile(page, false)
  await page.goto(`${base}${await signInPath(id)}`)
  await page.waitForFunction(routeShown, undefined, { timeout: 60_000 })
  const net = slow ? SLOW_3G : { latency: 0, downloadThroughput: -1, uploadThroughput: -1 }
  await cdp.send('Network.emulateNetworkConditions', { offline: true, ...net })
  await page.waitForFunction(() => document.getElementById('net').textContent === 'Offline')
  for (let i = 0; i < QUEUED; i++) {
    await page.click('.next button[data-action="complete"]')
    await page.click('.next form.proof button[type="submit"]')
    await page.waitForFunction((n: number) => document.querySelectorAll('ol.stops .badge.waiting').length === n, i + 1)
  }
  const started = performance.now()
  await cdp.send('Network.emulateNetworkConditions', { offline: false, ...net })
  await page.waitForFunction(() => document.querySelectorAll('.badge.waiting').length === 0, undefined, { timeout: 300_000, polling: 20 })
  const took = performance.now() - started
  // Where the time went: each request the phone made for the queue, from its start to its answer.
  const requests = await page.evaluate(`performance.getEntriesByType('resource')
    .filter((r) => /\\/api\\/v1\\/tasks\\/[^/]+\\/complete$/.test(new URL(r.name).pathname)).map((r) => r.responseEnd - r.startTime)`) as number[]
  requestTimes.push(...requests)
  const route = (await call('GET', `/api/v1/routes?driver_id=${id}`, ct)).routes.data[0]
  const complete = route.tasks.filter((x: { status: string }) => x.status === 'complete').length
  if (complete !== QUEUED) throw new Error(`only ${complete} of ${QUEUED} complete`)
  await context.close()
  return took
}
const drainFast = await drain(false)
const fastRequests = requestTimes.splice(0)
const drainSlow = await drain(true)

const f0 = (n: number) => n.toFixed(0)
const line = (name: string, xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return `${name.padEnd(58)} p50 ${f0(percentile(s, 50)).padStart(6)} ms  p90 ${f0(percentile(s, 90)).padStart(6)} ms  max ${f0(s.at(-1)!).padStart(6)} ms  (n=${s.length})`
}
console.log(`driver's app in Chromium, embedded default, 360 px, CPU ×4, Slow 3G (2 s round trip, 50 kB/s), ${LOADS} phones`)
if (LOADS > 0) {
console.log(line('first visit (sign-in link): first contentful paint', first.map((r) => r.fcp)))
console.log(line('first visit: the route shown (signed in, synced)', first.map((r) => r.shown)))
console.log(line('installed, opened again: first contentful paint', again.map((r) => r.fcp)))
console.log(line('installed, opened again: the route shown (from the phone)', again.map((r) => r.shown)))
  const s0 = first[0]!
console.log(`shell on the wire, first visit: ${s0.transfer} B in ${s0.files} files (${s0.decoded} B decoded); opened again: ${again[0]!.transfer} B`)
}
console.log(`${QUEUED} actions queued offline, network back → queue drained and all in the API: ${f0(drainFast)} ms on loopback (CPU ×4), ${f0(drainSlow)} ms on Slow 3G`)
console.log(line('  of which each POST …/complete, request to answer (loopback)', fastRequests))
if (LOADS > 0) {
  const p50 = percentile([...again.map((r) => r.fcp)].sort((a, b) => a - b), 50)
  console.log(`goal first paint ≤ 2000 ms (installed app): ${p50 <= 2000 ? 'met' : 'NOT met'} (p50 ${f0(p50)} ms)`)
}

await browser.close()
await app.close()
await platform.close()
rmSync(work, { recursive: true, force: true })
