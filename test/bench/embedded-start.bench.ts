// Issue 34: how long the platform on its embedded default takes to answer /health on a fresh
// DATA_DIR (initdb, the server's start, the migrations) and on a restart, beside a bare Fastify
// hello-world's start in the same run; and the server's and its PostgreSQL's memory at idle.
//   node --import tsx test/bench/embedded-start.bench.ts   (BENCH_ROUNDS=3; run-all.sh builds and sets BENCH_DIST=1)
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { treeRssMb } from './bench-report.js'
import { freePort, HELLO, platformEnv, platformServerArgs, platformServerKind, startProcess } from './bench-server.js'

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3)
const work = mkdtempSync(join(tmpdir(), 'embedded-start-bench-'))
// As root, the embedded PostgreSQL's user (postgres) must reach DATA_DIR inside it (mkdtemp makes it 0700).
chmodSync(work, 0o755)
const ADMIN_TOKEN = 'bench-admin-token-0123456789'

async function timedStart(label: string, args: string[], env: NodeJS.ProcessEnv) {
  const port = await freePort()
  const started = performance.now()
  const server = await startProcess(work, label, args, { ...env, PORT: String(port) }, port)
  return { ms: performance.now() - started, server }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const row = (name: string, xs: number[]) => `${name.padEnd(44)} median ${(median(xs) / 1000).toFixed(2)} s  (${xs.map((x) => (x / 1000).toFixed(2)).join(', ')})`

try {
  console.log(`embedded default start, ${ROUNDS} rounds, platform ${platformServerKind()}`)
  const hello: number[] = []
  const fresh: number[] = []
  const restart: number[] = []
  const idle: number[] = []
  for (let i = 0; i < ROUNDS; i++) {
    const h = await timedStart(`hello-${i}`, ['--input-type=module', '-e', HELLO], {})
    hello.push(h.ms)
    await h.server.stop()
    const dataDir = join(work, `data-${i}`)
    const env = { ...platformEnv({ port: 0, adminToken: ADMIN_TOKEN, dataDir, databaseUrl: '' }), NATS_URL: '' }
    const first = await timedStart(`fresh-${i}`, platformServerArgs(), env)
    fresh.push(first.ms)
    await new Promise((r) => setTimeout(r, 2000))
    idle.push(treeRssMb(first.server.child.pid!))
    await first.server.stop()
    const again = await timedStart(`restart-${i}`, platformServerArgs(), env)
    restart.push(again.ms)
    await again.server.stop()
  }
  console.log(row('bare Fastify hello-world to answering', hello))
  console.log(row('platform, fresh DATA_DIR to /health', fresh))
  console.log(row('platform, restart to /health', restart))
  console.log(`${'server + its PostgreSQL RSS at idle'.padEnd(44)} median ${median(idle).toFixed(0)} MB  (${idle.map((x) => x.toFixed(0)).join(', ')})`)
  console.log(`goals: fresh ≤ 3 s ${median(fresh) <= 3000 ? 'met' : 'NOT met'}; restart ≤ 1.5 s ${median(restart) <= 1500 ? 'met' : 'NOT met'}`)
} finally {
  rmSync(work, { recursive: true, force: true })
}
