import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { repoRoot } from './cli-process.js'

const run = promisify(execFile)

export interface PostgresServerProcess {
  url: string
  /**
   * `pg_ctl restart -m <mode> -w`: `fast` terminates every session (57P01) and shuts down
   * cleanly, `immediate` kills the server like a crash (recovery on start). Resolves once the
   * server accepts connections again, with that moment (Date.now()).
   */
  restart(mode: 'fast' | 'immediate'): Promise<number>
  /** Stops it and removes its data (infra/local/stop.sh). */
  destroy(): Promise<void>
}

/**
 * A PostgreSQL server of the test's own (infra/local/start-postgres.sh into a temporary state
 * directory), for tests that restart it: never the shared test server.
 */
export async function startPostgresServer(): Promise<PostgresServerProcess> {
  const state = mkdtempSync(join(tmpdir(), 'pg-outage-'))
  const script = (name: string) => join(repoRoot, 'infra/local', name)
  const destroy = async () => {
    await run('bash', [script('stop.sh'), state]).catch(() => undefined)
    rmSync(state, { recursive: true, force: true })
  }
  try {
    await run('bash', [script('start-postgres.sh'), state])
  } catch (err) {
    await destroy()
    throw err
  }
  const env = readFileSync(join(state, 'env'), 'utf8')
  const url = /^DATABASE_URL=(.*)$/m.exec(env)![1]!
  const data = join(readFileSync(join(state, 'postgres.home'), 'utf8').trim(), 'data')
  const pgBin = '/usr/lib/postgresql/15/bin'
  const asPostgres = (argv: string[]) => (process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', ...argv]] as const : [argv[0]!, argv.slice(1)] as const)
  return {
    url,
    async restart(mode) {
      const [cmd, args] = asPostgres([`${pgBin}/pg_ctl`, '-D', data, '-l', join(data, '..', 'postgres.log'), '-m', mode, '-w', '-t', '60', 'restart'])
      await run(cmd, [...args], { cwd: '/' })
      return Date.now()
    },
    destroy,
  }
}
