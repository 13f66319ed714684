// What the HTTP benches share: an autocannon run with warm-up, waiting for the background to catch
// up (from the server's /metrics), and one printed line per figure.
import autocannon from 'autocannon'

export const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 10)
export const WARMUP = Number(process.env['BENCH_WARMUP'] ?? 3)
export const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 50)

export interface Figures {
  rps: number; p50: number; p99: number; non2xx: number; errors: number
  /** The answers other than 2xx by status, e.g. `503×5` (autocannon's statusCodeStats). */
  codes?: string
}

export async function load(opts: autocannon.Options, warmup = true): Promise<Figures> {
  if (warmup) await autocannon({ ...opts, duration: WARMUP })
  const r = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...opts })
  const stats = (r['statusCodeStats'] ?? {}) as Record<string, { count: number }>
  const codes = Object.entries(stats).filter(([code]) => !code.startsWith('2')).map(([code, v]) => `${code}×${v.count}`).join(' ')
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts, ...(codes ? { codes } : {}) }
}

/**
 * Waits until the projections, the relay and every consumer have caught up with the log (the
 * server's /metrics), and answers how long that took: a peak the background cannot follow is not
 * a sustained rate.
 */
export async function drained(base: string, limitMs = 120_000): Promise<number> {
  const started = Date.now()
  for (;;) {
    const text = await (await fetch(`${base}/metrics`)).text()
    const behind = text.split('\n')
      .filter((l) => /^(projection_lag_events|bus_relay_lag_events|bus_consumer_lag_events)\b/.test(l))
      .reduce((sum, l) => sum + (Number(l.split(' ').pop()) || 0), 0)
    if (behind === 0) return Date.now() - started
    if (Date.now() - started > limitMs) throw new Error(`the background did not catch up in ${limitMs} ms:\n${text}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

export const f0 = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 })
export const line = (name: string, f: Figures) =>
  `${name.padEnd(46)} ${f0(f.rps).padStart(7)} req/s  p50 ${f.p50} ms  p99 ${f.p99} ms` +
  (f.non2xx || f.errors ? `  (non-2xx ${f.non2xx}, errors ${f.errors})` : '')
