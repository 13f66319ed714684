import { spawn, type ChildProcess } from 'node:child_process'
import { repoRoot } from './cli-process.js'
import { nodeArgs } from './node-script.js'

/** Variables of the test's own environment an API process must not inherit (it gets its own). */
const PRIVATE = ['ADMIN_TOKEN', 'ADMIN_TOKEN_FILE', 'DATABASE_URL', 'EVENTSTORE_URL', 'NATS_URL', 'NATS_STREAM', 'NATS_SUBJECT_PREFIX', 'DATA_DIR', 'PORT', 'SECRETS_KEY', 'SECRETS_KEY_FILE', 'BASE_DOMAIN', 'LOG_FORMAT', 'CORS_ORIGINS']

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
 * `node --import tsx src/main.ts` (or its compiled .js: node-script.ts) as an operator runs it, on a port of its choosing (PORT=0),
 * with `env` and nothing of the test's own services; resolves once it listens. `wrap` runs it
 * inside another command (`script`, for a terminal): given the server's argv, it returns the
 * whole command line; the process is then a group leader, to be signalled as `-pid`.
 */
export async function startApiProcess(env: NodeJS.ProcessEnv, opts: { teardown?: (fn: () => unknown) => void; wrap?: (argv: string[]) => string[] } = {}): Promise<ApiProcess> {
  const base = { ...process.env }
  for (const k of PRIVATE) delete base[k]
  const argv = [process.execPath, ...nodeArgs('src/main.ts')]
  const [command, ...args] = opts.wrap ? opts.wrap(argv) : argv
  const child = spawn(command!, args, {
    cwd: repoRoot, env: { ...base, PORT: '0', LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: opts.wrap !== undefined,
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
