import { spawn, type ChildProcess } from 'node:child_process'
import { repoRoot } from './cli-process.js'

/** Variables of the test's own environment an API process must not inherit (it gets its own). */
const PRIVATE = ['ADMIN_TOKEN', 'DATABASE_URL', 'EVENTSTORE_URL', 'NATS_URL', 'NATS_STREAM', 'NATS_SUBJECT_PREFIX', 'DATA_DIR', 'PORT', 'SECRETS_KEY', 'BASE_DOMAIN']

export interface ApiProcess {
  child: ChildProcess
  port: number
  url: string
  output(): string
  exited: Promise<number | null>
  /** SIGTERM and the exit code. */
  stop(): Promise<number | null>
}

/**
 * `node --import tsx src/main.ts` as an operator runs it, on a port of its choosing (PORT=0),
 * with `env` and nothing of the test's own services; resolves once it listens.
 */
export async function startApiProcess(env: NodeJS.ProcessEnv, opts: { teardown?: (fn: () => unknown) => void } = {}): Promise<ApiProcess> {
  const base = { ...process.env }
  for (const k of PRIVATE) delete base[k]
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: repoRoot, env: { ...base, PORT: '0', LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  })
  opts.teardown?.(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  let out = ''
  child.stdout!.on('data', (c) => { out += c })
  child.stderr!.on('data', (c) => { out += c })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
      if (m) { clearInterval(timer); resolve(Number(m[1])) }
    }, 50)
    void exited.then((code) => { clearInterval(timer); reject(new Error(`exited ${code} before listening:\n${out}`)) })
  })
  return {
    child, port, url: `http://127.0.0.1:${port}`, output: () => out, exited,
    stop: async () => { child.kill('SIGTERM'); return exited },
  }
}
