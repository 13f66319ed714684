import { createServer } from 'node:net'
import { spawn, type ChildProcess } from 'node:child_process'
import { openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const root = new URL('../../', import.meta.url).pathname

export interface Server { child: ChildProcess; port: number; stop(): Promise<void> }

/**
 * How the benches start the platform: the compiled server (`npm run build` → dist/, as a
 * deployment runs it) when BENCH_DIST=1, which run-all.sh sets after building; otherwise the
 * TypeScript sources through tsx (`npm start`), whose loader thread adds about 40 MB of RSS.
 */
export function platformServerArgs(): string[] {
  return process.env['BENCH_DIST'] === '1' ? [join(root, 'dist/src/main.js')] : ['--import', 'tsx', 'src/main.ts']
}

export const platformServerKind = (): string => (process.env['BENCH_DIST'] === '1' ? 'compiled (dist/)' : 'TypeScript through tsx')

/** A server as a child process (logs in `logDir/<label>.log`), ready once `/health` answers. */
export async function startProcess(logDir: string, label: string, args: string[], env: NodeJS.ProcessEnv, port: number): Promise<Server> {
  const log = join(logDir, `${label}.log`)
  const fd = openSync(log, 'w')
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] })
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  const deadline = Date.now() + 120_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${label} exited:\n${readFileSync(log, 'utf8')}`)
    if (Date.now() > deadline) throw new Error(`${label} did not start:\n${readFileSync(log, 'utf8')}`)
    try { if ((await fetch(`http://127.0.0.1:${port}/health`)).status < 500) break } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 100))
  }
  return { child, port, async stop() { child.kill('SIGTERM'); await exited } }
}

/** The baseline every HTTP bench compares with: a bare Fastify hello-world. */
/** A port that was free a moment ago on 127.0.0.1, for a child server to listen on. */
/** The platform server's environment in a bench: loopback, a scratch database, no rate limits (benches measure, not throttle). */
export const platformEnv = (o: { port: number; adminToken: string; dataDir: string; databaseUrl: string }): NodeJS.ProcessEnv => ({
  PORT: String(o.port), HOST: '127.0.0.1', ADMIN_TOKEN: o.adminToken, DATA_DIR: o.dataDir, DATABASE_URL: o.databaseUrl,
  RATE_LIMIT_PER_MINUTE: '100000000', TRACKING_RATE_LIMIT_PER_MINUTE: '0', LIVE_PAGE_RATE_LIMIT_PER_MINUTE: '0',
  SSE_STREAMS_PER_ADDRESS: '0', SSE_STREAMS_PER_PROCESS: '0', LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'warn',
})

export const freePort = () => new Promise<number>((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as { port: number }).port; s.close(() => resolve(p)) })
})

export const HELLO = `
import Fastify from 'fastify'
const app = Fastify()
app.get('/health', async () => ({ status: 'ok' }))
app.get('/', async () => ({ hello: 'world' }))
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
`

/**
 * The admin API of a bench server (201 or throw), and a contracted carrier and shipper made through
 * it; `carrierFields` adds to the carrier's creation body (e.g. `carriers_enabled: true` for its own hubs).
 */
export async function contractedPair(base: string, adminToken: string, carrierFields: Record<string, unknown> = {}) {
  const admin = async (path: string, body: unknown) => {
    const r = await fetch(`${base}/admin/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    if (r.status !== 201) throw new Error(`${path}: ${r.status} ${await r.text()}`)
    return r.json() as Promise<any>
  }
  const tag = () => Math.random().toString(16).slice(2, 8)
  const carrier = await admin('/organizations', { name: 'Bench Carrier', subdomain: `carrier-${tag()}`, roles: ['carrier'], ...carrierFields })
  const shipper = await admin('/organizations', { name: 'Bench Shipper', subdomain: `shipper-${tag()}`, roles: ['shipper'] })
  await admin('/contracts', { carrier_id: carrier.organization.id, shipper_id: shipper.organization.id })
  return { admin, carrier, shipper }
}

/** A carrier organization made through the admin API; its token, and a POST to the API as it (2xx or throw). */
export async function benchCarrier(base: string, adminToken: string) {
  const org = await (await fetch(`${base}/admin/v1/organizations`, {
    method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench Carrier', subdomain: `carrier-${Date.now().toString(36)}`, roles: ['carrier'] }),
  })).json() as any
  const token: string = org.access_token
  const orgId: string = org.organization.id
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const post = async (path: string, body: unknown) => {
    const r = await fetch(`${base}/api/v1${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
    if (r.status >= 300) throw new Error(`${path}: ${r.status} ${await r.text()}`)
    return r.json() as Promise<any>
  }
  return { token, orgId, headers, post }
}
