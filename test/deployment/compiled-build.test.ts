import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import t from 'tap'
import { freePort } from '../bench/bench-server.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

/** `npm run build && npm run start:dist`: the compiled server starts and serves, as `npm start` does. */
t.test('the compiled server (tsconfig.build.json) starts, migrates and answers', async (t) => {
  // Under infra/local/test.sh the suite itself runs tsc's output of this checkout, emitted with the
  // build's options (source maps included): src/ there is what `npm run build` writes, so it is
  // run as it is rather than compiled a second time. Run by hand (tsx), the test compiles.
  const compiledTree = import.meta.url.endsWith('.js') && existsSync(join(root, 'src', 'main.js.map'))
  // Inside the project, so the compiled files resolve node_modules as dist/ does.
  const out = compiledTree ? root : join(root, '.local', `compiled-${process.pid}`)
  if (compiledTree) {
    t.comment(`the suite's own compile of tsconfig.json (a superset of tsconfig.build.json's include) in ${root}`)
  } else {
    t.teardown(() => rmSync(out, { recursive: true, force: true }))
    const built = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', out], { cwd: root, encoding: 'utf8' })
    t.equal(built.status, 0, `tsc: ${built.stdout}${built.stderr}`)
  }
  t.ok(existsSync(join(out, 'src', 'main.js')) && existsSync(join(out, 'src', 'config.js.map')), 'the build wrote src/main.js and source maps')
  // start:dist runs with --enable-source-maps: an error's stack names the TypeScript line.
  const traced = spawnSync(process.execPath, ['--enable-source-maps', '--input-type=module', '-e',
    `import { loadConfig } from ${JSON.stringify(pathToFileURL(join(out, 'src/config.js')).href)}; try { loadConfig({ PORT: 'x' }) } catch (e) { console.log(e.stack) }`,
  ], { cwd: root, encoding: 'utf8' })
  t.match(traced.stdout, /PORT must be a whole number/)
  t.match(traced.stdout, /\bat \S+ \(\S*\/src\/config\.ts:\d+:\d+\)/, 'a stack frame in src/config.ts, through the source map')

  const dataDir = mkdtempSync(join(tmpdir(), 'compiled-'))
  // mkdtemp makes it 0700: as root, the embedded PostgreSQL's user (postgres) must reach its folder.
  chmodSync(dataDir, 0o755)
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const port = await freePort()
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', ADMIN_TOKEN: 'adm_compiled_test', DATA_DIR: dataDir, LOG_LEVEL: 'warn' }
  delete env.NATS_URL
  delete env.EVENTSTORE_URL
  delete env.DATABASE_URL
  // The embedded default: what `npm ci && npm start:dist` runs on a machine with nothing else.
  const child = spawn(process.execPath, [join(out, 'src/main.js')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d) => { output += String(d) })
  child.stderr.on('data', (d) => { output += String(d) })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  t.teardown(async () => { if (child.exitCode === null) { child.kill('SIGTERM'); await exited } })

  const base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) break
    try { if ((await fetch(`${base}/health`)).ok) break } catch { /* not yet */ }
    if (Date.now() > deadline) break
    await new Promise((r) => setTimeout(r, 200))
  }
  t.equal(child.exitCode, null, `the compiled server runs: ${output}`)
  t.equal((await fetch(`${base}/docs`, { redirect: 'manual' })).status < 400, true, '/docs is served')
  const created = await fetch(`${base}/admin/v1/organizations`, {
    method: 'POST',
    headers: { authorization: 'Bearer adm_compiled_test', 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Compiled Co', subdomain: 'compiled-co', roles: ['shipper'] }),
  })
  t.equal(created.status, 201, 'migrations ran and the admin API writes')
  const { access_token: token } = await created.json() as { access_token: string }
  const my = await fetch(`${base}/api/v1/organizations/my`, { headers: { authorization: `Bearer ${token}` } })
  t.equal(my.status, 200)
  t.match(await my.text(), /"name":"Compiled Co"/, 'and the projection answers the read')

  child.kill('SIGTERM')
  t.equal(await exited, 0, 'and it stops cleanly')
})
