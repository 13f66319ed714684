// Latency at a given request rate with evenly spaced arrivals (an open-loop, constant-arrival-rate
// load, as wrk2 or k6's constant-arrival-rate make). autocannon's `overallRate` gives each of its
// connections rate/connections per second and starts them together, so its requests leave in
// bursts of one per connection: at "half the peak" with 50 connections that is 50 requests at once,
// several times a second, which measures burst queueing rather than latency at that rate.
// Latency here runs from each request's scheduled time, so a slow answer cannot hide the requests
// that should have been sent meanwhile (no coordinated omission).
import http from 'node:http'

export interface OpenLoopFigures { rps: number; p50: number; p90: number; p99: number; max: number; non2xx: number; errors: number }

export async function openLoop(opts: {
  url: string
  method?: string
  headers?: Record<string, string>
  body?: string
  rate: number
  seconds: number
  maxSockets?: number
}): Promise<OpenLoopFigures> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.maxSockets ?? 256 })
  const url = new URL(opts.url)
  const latencies: number[] = []
  let non2xx = 0
  let errors = 0
  const inFlight = new Set<Promise<void>>()
  const send = (scheduled: number) => {
    const p = new Promise<void>((resolve) => {
      const req = http.request({
        agent, host: url.hostname, port: url.port, path: url.pathname + url.search, method: opts.method ?? 'GET',
        headers: { ...opts.headers, ...(opts.body ? { 'content-length': Buffer.byteLength(opts.body) } : {}) },
      }, (res) => {
        res.resume()
        res.on('end', () => {
          latencies.push(performance.now() - scheduled)
          if ((res.statusCode ?? 0) >= 300) non2xx++
          resolve()
        })
      })
      req.on('error', () => { errors++; resolve() })
      req.end(opts.body)
    })
    inFlight.add(p)
    void p.finally(() => inFlight.delete(p))
  }
  const start = performance.now()
  const total = Math.round(opts.rate * opts.seconds)
  let sent = 0
  while (sent < total) {
    const now = performance.now()
    // Every request whose time has come leaves now, each measured from its own scheduled time.
    const due = Math.min(total, Math.floor(((now - start) / 1000) * opts.rate) + 1)
    for (; sent < due; sent++) send(start + (sent / opts.rate) * 1000)
    const next = start + (sent / opts.rate) * 1000
    await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())))
  }
  await Promise.all(inFlight)
  const elapsed = (performance.now() - start) / 1000
  agent.destroy()
  latencies.sort((a, b) => a - b)
  const at = (q: number) => Math.round((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN) * 10) / 10
  return { rps: latencies.length / elapsed, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1), non2xx, errors }
}
