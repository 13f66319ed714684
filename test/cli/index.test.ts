import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import t from 'tap'
import { build } from '../helpers/build.js'
import { runCli } from '../helpers/cli-process.js'


function cli(args: string[], env: Record<string, string>) {
  return runCli(args, env, ['DATABASE_URL', 'EVENTSTORE_URL'])
}

t.test('an unknown command prints the usage and fails', async (t) => {
  const r = await cli(['frobnicate'], {})
  t.equal(r.code, 2)
  t.match(r.stderr, /rebuild/)
})

t.test('`rebuild` on the embedded PostgreSQL under DATA_DIR (started for its run)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-rebuild-'))
  // mkdtemp makes it 0700: as root, the server's user (postgres) could not reach its folder.
  chmodSync(dir, 0o755)
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const r = await cli(['rebuild'], { DATA_DIR: dir })
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /rebuilt read models from 0 events/)
})

t.test('`rebuild` against DATABASE_URL while a server process keeps projecting', async (t) => {
  const h = await build(t)
  const url = (h.platform.database as { url?: string }).url!
  const carrier = await h.createOrganization({ roles: ['carrier'] })
  for (let i = 0; i < 3; i++) await h.signContract(carrier.id, (await h.createOrganization({ roles: ['shipper'] })).id)
  const count = async () => Number((await sql<{ n: number }>`select count(*)::int as n from read_model.organizations`.execute(h.platform.db)).rows[0]!.n)
  t.equal(await count(), 4)
  const r = await cli(['rebuild'], { DATABASE_URL: url })
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /rebuilt read models from \d+ events/)
  t.equal(await count(), 4, 'the swapped-in tables hold every organization')
  const later = await h.createOrganization({ roles: ['shipper'] })
  const res = await h.call('GET', '/api/v1/organizations/my', { token: later.token })
  t.equal(res.statusCode, 200, 'the server\'s projector carries on in the swapped-in schema')
})
