import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import net, { type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

interface TestLike { teardown(fn: () => unknown): void }

export const freePort = () => new Promise<number>((ok) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as AddressInfo).port; s.close(() => ok(p)) })
})

export interface RunningNginx {
  port: number
  /** The shipped access log's file (its own format, as shipped). */
  accessLog: string
  errorLog: string
}

/**
 * Debian's nginx running the repository's infra/proxy/nginx.conf, its upstream pointed at `apiPort`
 * (or at several, each with the shipped file's server parameters), its listener at a free loopback
 * port, and its files (the shipped access log among them) in a temporary directory. Nothing else
 * of the shipped file is changed.
 */
export async function startNginx(t: TestLike, apiPort: number | number[]): Promise<RunningNginx> {
  const dir = mkdtempSync(join(tmpdir(), 'nginx-'))
  const port = await freePort()
  const accessLog = join(dir, 'access.log')
  const errorLog = join(dir, 'error.log')
  const shipped = readFileSync('infra/proxy/nginx.conf', 'utf8')
  const conf = shipped
    .replace(/server api-1:3000([^;]*);\s*server api-2:3000[^;]*;/, (_all, params: string) => typeof apiPort === 'number'
      ? `server 127.0.0.1:${apiPort};`
      : apiPort.map((p) => `server 127.0.0.1:${p}${params};`).join('\n    '))
    .replace('listen 8080;', `listen 127.0.0.1:${port};`)
    .replace(/access_log \/var\/log\/nginx\/access\.log (\w+);/, `access_log ${accessLog} $1;`)
    .replace('http {', `http {\n  client_body_temp_path ${dir}/body;\n  proxy_temp_path ${dir}/proxy;`)
  if (conf.includes('api-1') || !conf.includes(`127.0.0.1:${port}`) || !conf.includes(`access_log ${accessLog} `)) {
    throw new Error('infra/proxy/nginx.conf changed shape: adapt test/helpers/nginx.ts')
  }
  writeFileSync(join(dir, 'nginx.conf'), conf)
  const nginx = spawn('nginx', ['-p', dir, '-e', errorLog, '-c', join(dir, 'nginx.conf'), '-g', `daemon off; pid ${dir}/nginx.pid;`], {
    stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin` },
  })
  let err = ''
  nginx.stderr.on('data', (c) => { err += String(c) })
  const exited = new Promise<void>((ok) => nginx.on('exit', () => ok()))
  t.teardown(async () => { nginx.kill('SIGTERM'); await exited; rmSync(dir, { recursive: true, force: true }) })
  for (let i = 0; i < 100; i++) {
    if (nginx.exitCode !== null) throw new Error(`nginx exited: ${err}`)
    const up = await new Promise<boolean>((ok) => { const s = net.connect(port, '127.0.0.1', () => { s.end(); ok(true) }).on('error', () => ok(false)) })
    if (up) return { port, accessLog, errorLog }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`nginx did not start: ${err}`)
}
