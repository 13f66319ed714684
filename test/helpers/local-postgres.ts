import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { repoRoot } from './cli-process.js'

const run = promisify(execFile)

export interface LocalPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`, a superuser. */
  url: string
  stateDir: string
  /** `infra/local/stop.sh` on its state dir (stops the server, removes its data). Idempotent. */
  stop(): Promise<void>
}

/**
 * A PostgreSQL server of the test's own (`infra/local/start-postgres.sh` into a temporary state
 * dir), for tests that stop or restart it, or need it to themselves; never the shared test server.
 */
export async function startLocalPostgres(): Promise<LocalPostgres> {
  const stateDir = mkdtempSync(join(tmpdir(), 'own-postgres-'))
  const stop = async () => {
    await run('bash', [join(repoRoot, 'infra/local/stop.sh'), stateDir]).catch(() => undefined)
    rmSync(stateDir, { recursive: true, force: true })
  }
  try {
    await run('bash', [join(repoRoot, 'infra/local/start-postgres.sh'), stateDir])
  } catch (err) {
    await stop()
    throw err
  }
  const url = /^DATABASE_URL=(.+)$/m.exec(readFileSync(join(stateDir, 'env'), 'utf8'))?.[1]
  if (!url) { await stop(); throw new Error('start-postgres.sh wrote no DATABASE_URL') }
  return { url, stateDir, stop }
}
