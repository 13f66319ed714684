import t from 'tap'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createScratchDatabase } from '../helpers/test-database.js'
import { type ApiProcess, startApiProcess } from '../helpers/api-process.js'

type Started = ApiProcess
const start = (env: NodeJS.ProcessEnv) => startApiProcess(env)
const stop = async (s: Started) => { s.child.kill('SIGTERM'); return s.exited }

t.test('without ADMIN_TOKEN one is generated into DATA_DIR, printed once, and used', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'shipping-startup-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const env: NodeJS.ProcessEnv = { DATA_DIR: dataDir, DATABASE_URL: await createScratchDatabase(t) }

  const first = await start(env)
  t.teardown(() => { if (first.child.exitCode === null) first.child.kill('SIGKILL') })
  const printed = /Generated ADMIN_TOKEN \(kept in (\S+), shown once\): (\S+)/.exec(first.output())
  t.ok(printed, 'the generated token is printed')
  const token = printed![2]!
  t.equal(printed![1], join(dataDir, 'admin-token'))
  t.equal(readFileSync(join(dataDir, 'admin-token'), 'utf8').trim(), token, 'kept in DATA_DIR')
  t.equal(statSync(join(dataDir, 'admin-token')).mode & 0o077, 0, 'readable by its owner only')
  const url = `http://127.0.0.1:${first.port}`
  const created = await fetch(`${url}/admin/v1/organizations`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Startup Org', subdomain: 'startup-org', roles: ['shipper'] }),
  })
  t.equal(created.status, 201, 'the printed token is the admin token')
  t.equal((await fetch(`${url}/admin/v1/organizations/x/suspend`, { method: 'POST', headers: { authorization: 'Bearer adm_wrong' } })).status, 401)
  t.equal(await stop(first), 0, 'SIGTERM: a clean exit')
  t.match(first.output(), /shutting down/)

  const second = await start(env)
  t.teardown(() => { if (second.child.exitCode === null) second.child.kill('SIGKILL') })
  t.notMatch(second.output(), /Generated ADMIN_TOKEN/, 'not printed again')
  t.notOk(second.output().includes(token), 'the token appears nowhere in the second start\'s output')
  const again = await fetch(`http://127.0.0.1:${second.port}/admin/v1/organizations/x/suspend`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
  t.equal(again.status, 404, 'the same token still authenticates')
  t.equal(await stop(second), 0)
})
