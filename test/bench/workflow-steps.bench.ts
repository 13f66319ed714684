// Step latency of the workflow process manager (issue 11 "Figures"): from `POST /tasks/{ulid}/complete`
// returning to the next step's task being readable (GET /workflows/{id} lists it), p50/p99, at 1 and
// at 200 completions/s. Run: npx tsx test/bench/workflow-steps.bench.ts (BENCH_SLOW=15, BENCH_FAST=1000)
// With TEST_DB=postgres TEST_DATABASE_URL=… NATS_URL=… it runs on PostgreSQL + NATS (run-all.sh sets them).
// One process: the app through inject, the relay, the bus consumer and the projections, as deployed.
import { randomBytes } from 'node:crypto'
import { build } from '../helpers/build.js'
import { startBackground } from '../../src/processes/background.js'
import { silentLogger } from '../../src/infrastructure/bus/bus.js'
import { countStatements } from './statement-count.js'

const SLOW = Number(process.env['BENCH_SLOW'] ?? 15)
const FAST = Number(process.env['BENCH_FAST'] ?? 1000)
const POLL_MS = 5
/** Offered rates after the 1/s phase (issue 21: 100/s; issue 11: 200/s). */
const RATES = (process.env['BENCH_RATES'] ?? '100,200').split(',').map(Number)

const teardowns: (() => unknown)[] = []
const t = { teardown: (fn: () => unknown) => { teardowns.push(fn) } }
const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! }
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const statements = countStatements()

async function main() {
  const natsUrl = process.env['NATS_URL']
  const h = await build(t, { natsUrl, rateLimitPerMinute: 100_000_000 })
  const suffix = randomBytes(4).toString('hex')
  const bg = await startBackground(h.platform, silentLogger, { nats: { streamName: `WFB_${suffix}`, subjectPrefix: `wfb${suffix}` } })
  teardowns.unshift(() => bg.stop())
  console.log(`workflow-steps: db=${h.platform.database.kind}, bus=${bg.bus.kind}; the delivery task readable after the pickup's complete returns`)
  const org = await h.createOrganization({ roles: ['carrier'] })
  const address = { name: 'A', street: 'San Martín', street_number: '50', city: 'Rosario', state: 'Santa Fe', country: 'AR' }
  const start = async () => {
    const r = await h.call('POST', '/api/v1/workflows', { token: org.token, body: { blueprint_key: 'pickup-delivery', data: { origin: address, destination: address } } })
    if (r.statusCode !== 201) throw new Error(r.body)
    const wf = r.json().workflow.data
    return { id: wf.id as number, pickup: wf.tasks[0].ulid as string }
  }
  // One watcher for all outstanding workflows (a poller per workflow would load the process more
  // than the work measured): every POLL_MS one read-model query finds those whose delivery task is
  // there; the time is taken when it is seen, then confirmed through GET /workflows/{id}.
  const waiting = new Map<number, { from: number; done: (ms: number) => void }>()
  let watching = true
  const watcher = (async () => {
    while (watching) {
      if (waiting.size) {
        const rows = await h.platform.rm.selectFrom('tasks').select('workflow_id').where('workflow_id', 'in', [...waiting.keys()]).where('step_key', '=', 'delivery').execute()
        const now = performance.now()
        for (const r of rows) {
          const id = Number(r.workflow_id)
          const w = waiting.get(id)
          if (!w) continue
          waiting.delete(id)
          w.done(now - w.from)
        }
      }
      await sleep(POLL_MS)
    }
  })()
  teardowns.unshift(async () => { watching = false; await watcher })
  const one = async (wf: { id: number; pickup: string }): Promise<number> => {
    const c = await h.call('POST', `/api/v1/tasks/${wf.pickup}/complete`, { token: org.token })
    if (c.statusCode !== 200) throw new Error(c.body)
    const ms = await new Promise<number>((resolve, reject) => {
      waiting.set(wf.id, { from: performance.now(), done: resolve })
      setTimeout(() => reject(new Error(`workflow ${wf.id}: no delivery task after 60 s`)), 60_000).unref()
    })
    const g = await h.call('GET', `/api/v1/workflows/${wf.id}`, { token: org.token })
    if (g.json().tasks.length !== 2) throw new Error(`workflow ${wf.id}: GET does not list the delivery task`)
    return ms
  }
  const phase = async (label: string, n: number, perSecond: number) => {
    const wfs: { id: number; pickup: string }[] = []
    for (let i = 0; i < n; i++) wfs.push(await start())
    const gap = 1000 / perSecond
    const began = performance.now()
    const cpu0 = process.cpuUsage()
    const elu0 = performance.eventLoopUtilization()
    statements.reset()
    const runs: Promise<number>[] = []
    for (let i = 0; i < n; i++) {
      const due = began + i * gap
      const wait = due - performance.now()
      if (wait > 0) await sleep(wait)
      runs.push(one(wfs[i]!))
    }
    const lat = await Promise.all(runs)
    const achieved = n / ((performance.now() - began) / 1000)
    // CPU of this process (API, relay, manager, projections, the watcher) per completion, and how
    // busy its event loop was: less noisy than latency on a shared machine, and a saturated loop
    // (ELU near 1) says the step is CPU-bound here rather than waiting.
    const cpu = process.cpuUsage(cpu0)
    const elu = performance.eventLoopUtilization(elu0)
    const perStep = statements.total / n
    console.log(`${label}: ${n} completions offered at ${perSecond}/s (achieved ${achieved.toFixed(0)}/s): p50 ${pct(lat, 50).toFixed(1)} ms, p99 ${pct(lat, 99).toFixed(1)} ms, max ${Math.max(...lat).toFixed(1)} ms (poll every ${POLL_MS} ms); CPU ${((cpu.user + cpu.system) / 1000 / n).toFixed(2)} ms per completion, event loop ${(elu.utilization * 100).toFixed(0)}% busy`)
    if (h.platform.database.kind === 'postgres') {
      console.log(`  SQL statements per step (complete, reactions, the delivery task, the GET; this process, ${statements.total} in all): ${perStep.toFixed(1)}`)
      if (process.env['BENCH_STATEMENTS']) for (const [text, k] of statements.top(25)) console.log(`    ${(k / n).toFixed(2).padStart(6)}  ${text}`)
    }
  }
  await phase('1/s', SLOW, 1)
  for (const rate of RATES) await phase(`${rate}/s`, FAST, rate)
}

main().then(async () => { for (const f of teardowns) await f() ; process.exit(0) }, async (err) => { console.error(err); for (const f of teardowns) await f(); process.exit(1) })
