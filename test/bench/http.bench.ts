// HTTP benchmark (issue 2 §7): GET /api/v1/organizations/my under autocannon vs a bare Fastify
// hello-world measured in the same run (goal ≥ 0.5×), and the server's peak RSS (goal ≤ 250 MB
// with a PostgreSQL server; the embedded default reported too, with its PostgreSQL's processes).
//
//   bash infra/local/start-postgres.sh /tmp/benchpg && set -a && source /tmp/benchpg/env && set +a
//   npx tsx test/bench/http.bench.ts
//   (the env file has no `export`: `set -a` makes DATABASE_URL reach this process)
//
//   DATABASE_URL        PostgreSQL admin URL: a scratch database is created and dropped (run skipped if unset)
//   BENCH_SECONDS=10    measured seconds per target (after BENCH_WARMUP=3 s of warm-up)
//   BENCH_CONNECTIONS=50
//   BENCH_EMBEDDED=1    also run the server on the embedded default (PostgreSQL from npm; 0 to skip)
//   LOG_LEVEL=info      the server's log level (its logs go to a file, as in production)
// Each server is a child process (bench-server.ts: platformServerArgs, compiled under run-all.sh); RSS is read from
// /proc/<pid>/status (VmHWM = peak resident set) while the load runs. Not a tap test.
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { treeRssMb } from './bench-report.js'
import { freePort, HELLO, platformServerArgs, platformServerKind, startProcess as startServer } from './bench-server.js'
import { scratchDatabaseAt } from './bench-database.js'

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 10)
const WARMUP = Number(process.env['BENCH_WARMUP'] ?? 3)
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 50)
const ADMIN_TOKEN = `adm_bench_${randomBytes(8).toString('hex')}`
const work = mkdtempSync(join(tmpdir(), 'http-bench-'))
// As root, the embedded PostgreSQL's user (postgres) must reach DATA_DIR inside it (mkdtemp makes it 0700).
chmodSync(work, 0o755)


const kb = (pid: number, field: 'VmHWM' | 'VmRSS'): number => {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) : NaN
}

/** CPU seconds (user + system) the process has used: per-request cost, whatever else shares the cores. */
const cpuSeconds = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100 // utime, stime in clock ticks (USER_HZ = 100)
}

const startProcess = (label: string, args: string[], env: NodeJS.ProcessEnv, port: number) => startServer(work, label, args, env, port)


interface Figures { rps: number; p50: number; p99: number; non2xx: number; errors: number; cpuUsPerRequest: number; peakRssMb?: number }

async function load(url: string, headers: Record<string, string>, pid: number): Promise<Figures> {
  await autocannon({ url, connections: CONNECTIONS, duration: WARMUP, headers })
  let peak = 0
  const sampler = setInterval(() => { peak = Math.max(peak, kb(pid, 'VmRSS')) }, 200)
  const cpuBefore = cpuSeconds(pid)
  const r = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers })
  const cpu = cpuSeconds(pid) - cpuBefore
  clearInterval(sampler)
  const hwm = kb(pid, 'VmHWM')
  const total = r.requests.total as number
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts, cpuUsPerRequest: (cpu * 1e6) / total, peakRssMb: Math.max(peak, hwm) / 1024 }
}

async function hello(): Promise<Figures> {
  const port = await freePort()
  const s = await startProcess('hello', ['--input-type=module', '-e', HELLO], { PORT: String(port) }, port)
  try { return await load(`http://127.0.0.1:${port}/`, {}, s.child.pid!) } finally { await s.stop() }
}

async function platform(label: string, env: NodeJS.ProcessEnv): Promise<Figures & { idleRssMb: number; treeIdleMb: number; treeAfterMb: number }> {
  const port = await freePort()
  const s = await startProcess(label, platformServerArgs(), {
    PORT: String(port), HOST: '127.0.0.1', ADMIN_TOKEN, DATA_DIR: join(work, label),
    // The limiter's code path runs, but a benchmark's volume stays under its limit.
    RATE_LIMIT_PER_MINUTE: '100000000', LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'info', ...env,
  }, port)
  try {
    const created = await fetch(`http://127.0.0.1:${port}/admin/v1/organizations`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench Carrier', subdomain: `bench-${randomBytes(3).toString('hex')}`, roles: ['carrier', 'shipper'] }),
    })
    if (created.status !== 201) throw new Error(`create organization: ${created.status} ${await created.text()}`)
    const token = ((await created.json()) as { access_token: string }).access_token
    const idleRssMb = kb(s.child.pid!, 'VmRSS') / 1024
    const url = `http://127.0.0.1:${port}/api/v1/organizations/my`
    const check = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
    if (check.status !== 200) throw new Error(`GET /organizations/my: ${check.status}`)
    const treeIdleMb = treeRssMb(s.child.pid!)
    const figures = await load(url, { authorization: `Bearer ${token}` }, s.child.pid!)
    return { ...figures, idleRssMb, treeIdleMb, treeAfterMb: treeRssMb(s.child.pid!) }
  } finally { await s.stop() }
}

const scratchPostgres = (admin: string) => scratchDatabaseAt(admin, 'http')

const f0 = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 })
const line = (name: string, f: Figures, base?: Figures) =>
  `${name.padEnd(44)} ${f0(f.rps).padStart(7)} req/s  p50 ${f.p50} ms  p99 ${f.p99} ms  server CPU ${f.cpuUsPerRequest.toFixed(0)} µs/req` +
  (base ? `  ratio ${(f.rps / base.rps).toFixed(2)}× (by CPU per request ${(base.cpuUsPerRequest / f.cpuUsPerRequest).toFixed(2)}×)` : '') +
  (f.peakRssMb !== undefined ? `  peak RSS ${f.peakRssMb.toFixed(0)} MB` : '') +
  (f.non2xx || f.errors ? `  (non-2xx ${f.non2xx}, errors ${f.errors})` : '')

try {
  console.log(`autocannon: ${CONNECTIONS} connections, ${WARMUP} s warm-up + ${SECONDS} s measured per target; server LOG_LEVEL=${process.env['LOG_LEVEL'] ?? 'info'}, ${platformServerKind()}`)
  const before = await hello()
  console.log(line('bare Fastify hello-world', before))
  const results: Array<[string, Figures & { idleRssMb: number; treeIdleMb: number; treeAfterMb: number }]> = []
  const admin = process.env['DATABASE_URL']
  if (admin) {
    const db = await scratchPostgres(admin)
    try {
      results.push(['GET /organizations/my (PostgreSQL)', await platform('postgres', { DATABASE_URL: db.url })])
    } finally { await db.drop() }
  } else {
    console.log('DATABASE_URL not set: PostgreSQL run skipped (bash infra/local/start-postgres.sh /tmp/benchpg && set -a && source /tmp/benchpg/env && set +a)')
  }
  if (process.env['BENCH_EMBEDDED'] !== '0') results.push(['GET /organizations/my (embedded default)', await platform('embedded', { DATABASE_URL: '', NATS_URL: '' })])
  const after = await hello()
  console.log(line('bare Fastify hello-world (again)', after))
  const base: Figures = { ...before, rps: (before.rps + after.rps) / 2, cpuUsPerRequest: (before.cpuUsPerRequest + after.cpuUsPerRequest) / 2 }
  console.log(`baseline (mean of both hello-world runs): ${f0(base.rps)} req/s, ${base.cpuUsPerRequest.toFixed(0)} µs CPU/req; load average now ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`)
  for (const [name, f] of results) {
    console.log(line(name, f, base))
    console.log(`${''.padEnd(44)} server + its children RSS: idle ${f.treeIdleMb.toFixed(0)} MB, after the load ${f.treeAfterMb.toFixed(0)} MB`)
    console.log(`${''.padEnd(44)} idle RSS after start ${f.idleRssMb.toFixed(0)} MB; goal ratio ≥ 0.5× ${f.rps / base.rps >= 0.5 ? 'met' : 'NOT met'}; peak RSS goal ≤ 250 MB ${f.peakRssMb! <= 250 ? 'met' : 'NOT met'}`)
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
