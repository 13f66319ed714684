import t from 'tap'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createScratchDatabase } from '../helpers/test-database.js'
import { startApiProcess, type ApiProcess } from '../helpers/api-process.js'
import { startupSummary } from '../../src/startup-summary.js'
import { loadConfig } from '../../src/config.js'

const PASSWORD = 'pw-Never-Printed-42'
const ADMIN = 'adm_from_docker_secret_file_0123456789'
const keep = (t: { teardown(fn: () => void): void }, s: ApiProcess) => t.teardown(() => { if (s.child.exitCode === null) s.child.kill('SIGKILL') })

/** The line a newcomer reads at start, and every line parsed as JSON (the default off a terminal). */
const startLine = (output: string) => {
  const lines = output.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, any>)
  return { lines, ready: lines.find((l) => /^ready:/.test(l.msg ?? '')) }
}

/** The output once the start line is in: it comes after "Server listening" (what startApiProcess
 * waits for), through pino-pretty and, for a terminal, a pseudo-terminal, so under load it can trail. */
const startLineOf = async (server: ApiProcess) => {
  for (let end = Date.now() + 15_000; Date.now() < end && !server.output().includes('ready: database');) await new Promise((r) => setTimeout(r, 50))
  return server.output()
}

t.test('npm start says which database, event store, bus, DATA_DIR and /docs it uses, without passwords; secrets from *_FILE', async (t) => {
  const dir = t.testdir({ 'admin-token': `${ADMIN}\n`, 'secrets-key': `${Buffer.alloc(32, 3).toString('base64')}\n`, data: {} })
  const dataDir = join(dir, 'data')
  const env: NodeJS.ProcessEnv = { DATA_DIR: dataDir, ADMIN_TOKEN_FILE: join(dir, 'admin-token'), SECRETS_KEY_FILE: join(dir, 'secrets-key') }
  // The test server trusts loopback, so a password in the URL is accepted and must still not show.
  const url = new URL(await createScratchDatabase(t))
  url.username = 'postgres'
  url.password = PASSWORD
  env.DATABASE_URL = url.toString()
  const database = `PostgreSQL ${url.host}${url.pathname}`
  if (process.env.NATS_URL) {
    // A stream and subjects of its own on the suite's shared NATS server.
    const tag = `${process.pid}_${Date.now() % 1e6}`
    Object.assign(env, { NATS_URL: process.env.NATS_URL, NATS_STREAM: `STARTUP_${tag}`, NATS_SUBJECT_PREFIX: `startup${tag}.` })
  }
  const server = await startApiProcess(env)
  keep(t, server)
  const { lines, ready } = startLine(await startLineOf(server))
  t.ok(lines.length > 1, 'off a terminal every line is JSON')
  t.ok(ready, 'the start line is logged')
  const docs = `http://127.0.0.1:${server.port}/docs`
  t.match(ready!.startup, {
    database,
    event_store: 'the database above (events table)',
    bus: process.env.NATS_URL ? `NATS JetStream nats://${new URL(process.env.NATS_URL).host}` : 'in-process (in the database)',
    data_dir: dataDir,
    docs,
  })
  t.match(ready!.msg, `database ${ready!.startup.database}`)
  t.match(ready!.msg, `DATA_DIR ${dataDir}`)
  t.match(ready!.msg, `API reference at ${docs}`)
  t.equal((await fetch(docs, { redirect: 'manual' })).status < 400, true, 'the /docs address it prints is served')
  t.notMatch(server.output(), PASSWORD, 'the database password appears nowhere')

  const admin = await fetch(`http://127.0.0.1:${server.port}/admin/v1/organizations/x/suspend`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } })
  t.equal(admin.status, 404, 'ADMIN_TOKEN_FILE\'s token authenticates')
  t.notMatch(server.output(), /Generated ADMIN_TOKEN/)
  t.notOk(existsSync(join(dataDir, 'admin-token')) || existsSync(join(dataDir, 'secrets-key')), 'no secret generated into DATA_DIR')
  t.notMatch(server.output(), ADMIN, 'the admin token is not printed')
  t.equal(await server.stop(), 0)
})

t.test('LOG_FORMAT=pretty, or a terminal on stdout: readable lines (pino-pretty), not JSON', async (t) => {
  const dir = t.testdir({ data: {} })
  const env = { DATA_DIR: join(dir, 'data'), ADMIN_TOKEN: ADMIN }
  const readable = (output: string) => {
    const ready = output.split(/\r?\n/).find((l) => l.includes('ready: database'))
    t.ok(ready, 'the start line is there')
    t.match(ready, /^\S*\[\d\d:\d\d:\d\d\.\d{3}\]\s.*INFO.*: ready: database embedded PostgreSQL 18\.4 in /, 'time, level, message')
    t.throws(() => JSON.parse(ready!), 'not JSON')
    t.notMatch(output, /"startup":/, 'the start line\'s fields are not repeated under it')
  }

  const pretty = await startApiProcess({ ...env, LOG_FORMAT: 'pretty' })
  keep(t, pretty)
  await t.test('LOG_FORMAT=pretty', async () => readable(await startLineOf(pretty)))
  t.equal(await pretty.stop(), 0)

  // `script` gives the server a pseudo-terminal for stdout, as `npm start` in a terminal has.
  const terminal = await startApiProcess(env, { wrap: (argv) => ['script', '-qefc', argv.join(' '), '/dev/null'] })
  t.teardown(() => { try { process.kill(-terminal.child.pid!, 'SIGKILL') } catch { /* gone */ } })
  await t.test('LOG_FORMAT unset, stdout a terminal', async () => readable(await startLineOf(terminal)))
  process.kill(-terminal.child.pid!, 'SIGTERM')
  await terminal.exited
})

t.test('the summary names servers without credentials: PostgreSQL, KurrentDB, several NATS servers', async (t) => {
  const s = startupSummary(loadConfig({
    DATABASE_URL: 'postgres://app:s3cret@db.internal:5432/shipping?sslmode=require',
    EVENTSTORE_URL: 'kurrentdb://admin:changeit@kurrent:2113?tls=false',
    NATS_URL: 'nats://u:p4ss@n1:4222, tls://n2:4222',
    HOST: '0.0.0.0', DATA_DIR: '/var/lib/shipping-platform',
  }), 3000)
  t.same(s, {
    database: 'PostgreSQL db.internal:5432/shipping',
    event_store: 'KurrentDB kurrent:2113',
    bus: 'NATS JetStream nats://n1:4222, tls://n2:4222',
    data_dir: '/var/lib/shipping-platform',
    docs: 'http://localhost:3000/docs',
  })
})
