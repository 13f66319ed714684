// The public tracking page's first paint in Chromium on the embedded default (PostgreSQL from npm, one platform process),
// beside a static hello page served by the same server in the same run (the baseline), and what
// the page costs on the wire (DESIGN §3.10, issue 24: first paint ≤ 1 s; no framework, no outside
// request). Each load is a fresh browser context (nothing cached).
// Run: bash test/bench/run-all.sh tracking-page (or npx tsx test/bench/tracking-page.bench.ts).
// BENCH_LOADS=15.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { chromium } from 'playwright-core'
import { loadConfig } from '../../src/config.js'
import { createPlatform } from '../../src/platform.js'
import { buildApp } from '../../src/http/app.js'
import { modules } from '../../src/modules.js'
import type { HttpModule } from '../../src/http/module.js'
import { percentile } from './bench-database.js'

declare const document: any
declare const performance: any

const LOADS = Number(process.env['BENCH_LOADS'] ?? 15)
const ADMIN = 'bench-admin-token-tracking'
const HELLO = '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Hello</title></head><body><h1>Hello</h1><p>A static page.</p></body></html>'
const baseline: HttpModule = { name: 'bench-hello', async publicRoutes(app) { app.get('/bench/hello', async (_req, reply) => reply.type('text/html; charset=utf-8').send(HELLO)) } }

const work = mkdtempSync(join(tmpdir(), 'tracking-page-bench-'))
// As root, the embedded PostgreSQL's user (postgres) must reach DATA_DIR inside it (mkdtemp makes it 0700).
chmodSync(work, 0o755)
// No DATABASE_URL: the embedded default (PostgreSQL from npm in DATA_DIR), whatever the shell exports.
const config = loadConfig({ DATA_DIR: join(work, 'data'), ADMIN_TOKEN: ADMIN, SECRETS_KEY: Buffer.alloc(32, 5).toString('base64'), TRACKING_RATE_LIMIT_PER_MINUTE: '0' })
const platform = await createPlatform(config)
const app = await buildApp(platform, { logger: false, modules: [...modules, baseline] })
await app.listen({ port: 0, host: '127.0.0.1' })
const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

const call = async (url: string, token: string, body?: unknown) => {
  const res = await app.inject({ method: body === undefined ? 'GET' : 'POST', url, headers: { authorization: `Bearer ${token}`, accept: 'application/json' }, ...(body !== undefined ? { payload: body as object } : {}) })
  if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
  return JSON.parse(res.body)
}
const org = async (name: string, roles: string[]) =>
  call('/admin/v1/organizations', ADMIN, { name, subdomain: `${name.toLowerCase().replace(/\W/g, '')}-${Date.now()}`, roles })
const carrier = await org('Correo Bench', ['carrier'])
const shipper = await org('Tienda Bench', ['shipper'])
await call('/admin/v1/contracts', ADMIN, { carrier_id: carrier.organization.id, shipper_id: shipper.organization.id })
const address = { name: 'Ana Gómez', street: 'San Martín', street_number: '50', city: 'Rosario', state: 'Santa Fe', country: 'AR' }
const shipment = (await call('/api/v1/shipments', shipper.access_token, {
  carrier_id: carrier.organization.id, is_public: true, origin: address, destination: address, packages: [{ grams: 500, length: 10, width: 10, height: 10 }],
})).shipment
const trackingPath = new URL(shipment.public_tracking_url).pathname

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
})

interface Load { fp: number; fcp: number; shown: number; transfer: number; body: number; decoded: number; requests: number; outside: number }

async function load(path: string, ready?: () => boolean): Promise<Load> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } })
  const page = await context.newPage()
  let requests = 0
  let outside = 0
  page.on('request', (r) => { requests++; if (!r.url().startsWith(base)) outside++ })
  await page.goto(`${base}${path}`, { waitUntil: 'load' })
  if (ready) await page.waitForFunction(ready, undefined, { timeout: 10_000 })
  const shownAt = await page.evaluate(() => performance.now())
  await page.waitForFunction(() => performance.getEntriesByName('first-contentful-paint').length > 0, undefined, { timeout: 10_000 })
  // A string, not a function: tsx would wrap a named helper in code the page does not have.
  const m = await page.evaluate(`(() => {
    const nav = performance.getEntriesByType('navigation')[0]
    const fp = performance.getEntriesByName('first-paint')[0]
    const fcp = performance.getEntriesByName('first-contentful-paint')[0]
    return { fp: fp ? fp.startTime : NaN, fcp: fcp ? fcp.startTime : NaN, transfer: nav.transferSize, body: nav.encodedBodySize, decoded: nav.decodedBodySize }
  })()`) as { fp: number; fcp: number; transfer: number; body: number; decoded: number }
  await context.close()
  return { ...m, shown: ready ? shownAt : m.fcp, requests, outside }
}

const runs: Record<'hello' | 'tracking', Load[]> = { hello: [], tracking: [] }
await load('/bench/hello')
await load(trackingPath, () => document.getElementById('status').textContent !== '')
for (let i = 0; i < LOADS; i++) {
  runs.hello.push(await load('/bench/hello'))
  runs.tracking.push(await load(trackingPath, () => document.getElementById('status').textContent !== ''))
}

const f0 = (n: number) => n.toFixed(0)
const line = (name: string, xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return `${name.padEnd(54)} p50 ${f0(percentile(s, 50)).padStart(5)} ms  p90 ${f0(percentile(s, 90)).padStart(5)} ms  max ${f0(s.at(-1)!).padStart(5)} ms  (n=${s.length})`
}
console.log(`tracking page in Chromium, embedded default, ${LOADS} fresh loads each, 390 px wide`)
console.log(line('baseline: static hello page, first paint', runs.hello.map((r) => r.fp)))
console.log(line('baseline: static hello page, first contentful paint', runs.hello.map((r) => r.fcp)))
console.log(line('tracking page, first paint', runs.tracking.map((r) => r.fp)))
console.log(line('tracking page, first contentful paint', runs.tracking.map((r) => r.fcp)))
console.log(line('tracking page, status shown (data from its stream)', runs.tracking.map((r) => r.shown)))
const t0 = runs.tracking[0]!
const h0 = runs.hello[0]!
console.log(`tracking page transfer: ${t0.transfer} B on the wire (HTML ${t0.body} B compressed, ${t0.decoded} B decoded); requests ${t0.requests} (page + its stream), outside ${Math.max(...runs.tracking.map((r) => r.outside))}`)
console.log(`baseline transfer: ${h0.transfer} B on the wire (HTML ${h0.body} B); requests ${h0.requests}`)
const p50 = percentile([...runs.tracking.map((r) => r.fp)].sort((a, b) => a - b), 50)
console.log(`goal first paint ≤ 1000 ms: ${p50 <= 1000 ? 'met' : 'NOT met'} (p50 ${f0(p50)} ms)`)

await browser.close()
await app.close()
await platform.close()
rmSync(work, { recursive: true, force: true })
