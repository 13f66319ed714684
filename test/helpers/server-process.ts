import { spawn, type ChildProcess } from 'node:child_process'
import { repoRoot } from './cli-process.js'

export interface ServerProcess { child: ChildProcess; port: number; output: () => string; exited: Promise<number | null> }

/** Variables of the test's own environment that would otherwise leak into the server's. */
const OWN = ['ADMIN_TOKEN', 'ADMIN_TOKEN_FILE', 'DATABASE_URL', 'DATA_DIR', 'PORT', 'SECRETS_KEY', 'SECRETS_KEY_FILE', 'BASE_DOMAIN', 'NATS_URL', 'LOG_FORMAT', 'CORS_ORIGINS']

/**
 * `node --import tsx src/main.ts` as an operator runs it, on a port of its choosing, its stdout and
 * stderr read together. `command` wraps it (e.g. `script` for a terminal): its argv, the server's last.
 */
export async function startServer(env: NodeJS.ProcessEnv, wrap?: (argv: string[]) => string[]): Promise<ServerProcess> {
  const base = { ...process.env }
  for (const k of OWN) delete base[k]
  const argv = [process.execPath, '--import', 'tsx', 'src/main.ts']
  const [command, ...args] = wrap ? wrap(argv) : argv
  const child = spawn(command!, args, { cwd: repoRoot, env: { ...base, PORT: '0', LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: wrap !== undefined })
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
  return { child, port, output: () => out, exited }
}

export const stopServer = async (s: ServerProcess) => { s.child.kill('SIGTERM'); return s.exited }
