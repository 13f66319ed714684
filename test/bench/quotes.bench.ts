// Quote latency with one carrier callback hanging (issue 5 §7, goal p99 ≤ 550 ms).
// Run: npx tsx test/bench/quotes.bench.ts   (BENCH_QUOTES=200 requests per scenario, BENCH_CONCURRENCY=8)
// Needs TEST_DATABASE_URL (test/bench/run-all.sh sets it): a scratch database on that server.
// Baseline, same run: the same request when every callback answers at once.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { build } from '../helpers/build.js'
import { sampleRates } from '../tariffs/fixtures/sample-rates.js'
import { closeIdleConnections } from '../../src/notifications/safe-http.js'

const N = Number(process.env['BENCH_QUOTES'] ?? 200)
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 8)
const teardowns: (() => unknown)[] = []
const t = { teardown: (fn: () => unknown) => { teardowns.push(fn) } }

const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! }

async function main() {
  let hang = true
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      if (req.url === '/hang' && hang) return // never answers
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ price: 42, currency: 'ARS', estimated_delivery_days: 2 }))
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const h = await build(t, { rateLimitPerMinute: 1_000_000 })
  const carrierOrg = await h.createOrganization({ roles: ['carrier'], carriers_enabled: true })
  const shipper = await h.createOrganization({ roles: ['shipper'] })
  await h.signContract(carrierOrg.id, shipper.id)
  const carriers = [
    { name: 'Tariff A', quote_mode: 'tariff' }, { name: 'Tariff B', quote_mode: 'tariff' },
    { name: 'Api fast', quote_mode: 'api', quote_url: `${base}/fast` }, { name: 'Api hanging', quote_mode: 'api', quote_url: `${base}/hang` },
  ]
  for (const [i, c] of carriers.entries()) {
    const made = (await h.call('POST', '/api/v1/carriers', { token: carrierOrg.token, body: { integration: 'custom', visibility: 'public', access_mode: 'contract', ...c } })).json()
    const tr = (await h.call('POST', '/carrier/v1/tariffs', { token: made.api_key, body: { name: c.name, currency: 'ARS', service_type: { code: `st${i}`, name: c.name } } })).json().tariff
    await h.call('PUT', `/carrier/v1/tariffs/${tr.id}/rates`, { token: made.api_key, body: sampleRates })
    await h.call('POST', `/carrier/v1/tariffs/${tr.id}/activate`, { token: made.api_key })
    await h.admin('POST', `/carriers/${made.carrier.id}/certification`, { status: 'certified' })
  }
  const address = await h.app.listen({ port: 0, host: '127.0.0.1' })
  const body = JSON.stringify({
    origin: { name: 'A', street: 'S', street_number: '1', city: 'La Plata', state: 'Buenos Aires', country: 'AR' },
    destination: { name: 'B', street: 'S', street_number: '2', city: 'Salta', state: 'Salta', country: 'AR' },
    packages: [{ grams: 800, length: 20, width: 10, height: 10 }], carrier_id: carrierOrg.id,
  })
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  const one = () => new Promise<{ ms: number; quotes: number }>((resolve, reject) => {
    const started = performance.now()
    const req = http.request(`${address}/api/v1/shipments/quotes`, { method: 'POST', agent, headers: { authorization: `Bearer ${shipper.token}`, 'content-type': 'application/json', accept: 'application/json' } }, (res) => {
      let data = ''
      res.on('data', (c) => { data += c })
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${res.statusCode} ${data}`))
        resolve({ ms: performance.now() - started, quotes: JSON.parse(data).quotes.length })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
  const run = async (label: string) => {
    for (let i = 0; i < 10; i++) await one() // warm-up
    const times: number[] = []
    let quotes = 0
    const started = performance.now()
    let next = 0
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < N) { next++; const r = await one(); times.push(r.ms); quotes = r.quotes }
    }))
    const secs = (performance.now() - started) / 1000
    console.log(`${label.padEnd(34)} n=${N} c=${CONCURRENCY}  p50 ${pct(times, 50).toFixed(1)} ms  p99 ${pct(times, 99).toFixed(1)} ms  max ${Math.max(...times).toFixed(1)} ms  ${(N / secs).toFixed(0)} req/s  quotes/answer=${quotes}`)
    return pct(times, 99)
  }
  console.log(`POST /api/v1/shipments/quotes, 4 service types (2 tariff, 2 api), QUOTE_TIMEOUT_MS=${h.platform.config.quoteTimeoutMs}, db=${process.env['TEST_DB'] === 'postgres' ? 'postgres' : 'pglite'}`)
  hang = false
  const baseline = await run('baseline: every callback answers')
  hang = true
  const p99 = await run('one callback hangs')
  console.log(`p99 with a hanging callback: ${p99.toFixed(1)} ms (goal ≤ 550 ms: ${p99 <= 550 ? 'met' : 'NOT met'}); baseline p99 ${baseline.toFixed(1)} ms`)
  agent.destroy()
  server.closeAllConnections()
  server.close()
  closeIdleConnections()
  for (const fn of teardowns.reverse()) await fn()
}

await main()
