import t from 'tap'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startApiProcess, type ApiProcess } from '../../helpers/api-process.js'
import { runCli } from '../../helpers/cli-process.js'
import { isAlive, readPostmasterPid } from '../../../src/infrastructure/database/embedded/postmaster-pid.js'

/** `npm start` with DATA_DIR and nothing else: the embedded PostgreSQL, as a newcomer gets it. */
const SERVICES = ['DATABASE_URL', 'EVENTSTORE_URL', 'NATS_URL', 'NATS_STREAM', 'NATS_SUBJECT_PREFIX']

async function healthy(server: ApiProcess): Promise<void> {
  const r = await fetch(`${server.url}/health`)
  if (r.status !== 200) throw new Error(`/health answered ${r.status}`)
}

/** The pid the start line names for the embedded server. */
async function serverPidOf(server: ApiProcess, dir: string): Promise<number> {
  const line = `embedded PostgreSQL 18.4 in ${dir}/postgres (socket ${dir}/postgres/socket, pid `
  for (const end = Date.now() + 15_000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
    const at = server.output().indexOf(line)
    if (at >= 0) return Number(/^\d+/.exec(server.output().slice(at + line.length))![0])
  }
  throw new Error(`no start line naming the embedded server:\n${server.output()}`)
}

t.test('npm start on a fresh DATA_DIR runs the embedded PostgreSQL; a second start is refused; restart, kill -9 and the CLI', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'embedded-platform-'))
  chmodSync(dir, 0o755)
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const env = { DATA_DIR: dir }
  const timed = async () => {
    const since = Date.now()
    const server = await startApiProcess(env, { teardown: (fn) => t.teardown(fn) })
    await healthy(server)
    return { server, ms: Date.now() - since }
  }

  const { server: first, ms: firstMs } = await timed()
  const firstPg = await serverPidOf(first, dir)
  t.equal(isAlive(firstPg), true)
  t.comment(`first start on a fresh DATA_DIR to /health: ${firstMs} ms`)
  const ready = await (await fetch(`${first.url}/ready`)).json() as { status: string }
  t.match(ready, { status: /^(ready|degraded)$/ }, 'its database answers /ready')

  const second = await startApiProcess(env, { teardown: (fn) => t.teardown(fn) }).then(() => undefined, (err: unknown) => String(err))
  t.match(second, /^Error: exited 2 before listening/, 'a second platform on the DATA_DIR exits 2')
  t.match(second, `DATA_DIR ${dir} is in use by another platform (pid ${first.child.pid})`, 'naming the DATA_DIR and the first one\'s pid')

  const attached = await runCli(['rebuild'], env, SERVICES)
  t.equal(attached.code, 0, `a CLI command works beside the running platform: ${attached.stderr}`)
  t.match(attached.stdout, /rebuilt read models from \d+ events/)

  t.equal(await first.stop(), 0, 'SIGTERM: a clean stop')
  t.equal(isAlive(firstPg), false, 'which stops the server')
  t.equal(readPostmasterPid(join(dir, 'postgres', 'data')), undefined)

  const { server: restarted, ms: restartMs } = await timed()
  t.comment(`restart to /health: ${restartMs} ms`)
  const restartedPg = await serverPidOf(restarted, dir)
  restarted.child.kill('SIGKILL')
  await restarted.exited
  t.equal(isAlive(restartedPg), true, 'kill -9 of the platform leaves its server running')

  const { server: afterKill, ms: afterKillMs } = await timed()
  t.comment(`start after kill -9 to /health: ${afterKillMs} ms`)
  t.equal(isAlive(restartedPg), false, 'the next start stopped the orphaned server')
  const afterKillPg = await serverPidOf(afterKill, dir)
  t.not(afterKillPg, restartedPg)
  t.equal(await afterKill.stop(), 0)

  const alone = await runCli(['rebuild'], env, SERVICES)
  t.equal(alone.code, 0, `with no platform running, a CLI command runs its own server: ${alone.stderr}`)
  t.equal(readPostmasterPid(join(dir, 'postgres', 'data')), undefined, 'and stops it')
})
