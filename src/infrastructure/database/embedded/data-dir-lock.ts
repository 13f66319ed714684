import { createHash } from 'node:crypto'
import { statSync, unlinkSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { errnoOf } from '../../../shared/thrown.js'

/** Who holds a DATA_DIR: what its lock answers a process that asks. */
export interface LockHolder {
  pid: number
  /** `platform` (npm start) or a CLI command's name. */
  role: string
}

export interface DataDirLock {
  release(): Promise<void>
}

/**
 * One process at a time owns a DATA_DIR's embedded server (docs/decisions.md, "The DATA_DIR lock").
 * The lock is a listening Unix socket: on Linux in the abstract namespace, a name the kernel frees
 * when the process dies however it dies (kill -9 included), so there is no stale lock to judge;
 * elsewhere a socket file, stale when nothing answers on it. The holder answers whoever connects
 * with its pid and role, which is how a refused process names it.
 *
 * Resolves to the lock, or to the holder when another live process has it.
 */
export async function lockDataDir(dataDir: string, role: string): Promise<DataDirLock | LockHolder> {
  const address = lockAddress(dataDir)
  for (let attempt = 0; ; attempt++) {
    const server = net.createServer((socket) => {
      socket.on('error', () => undefined)
      socket.end(`${JSON.stringify({ pid: process.pid, role } satisfies LockHolder)}\n`)
    })
    const listened = await new Promise<unknown>((resolve) => {
      server.once('error', resolve)
      server.listen(address, () => resolve(undefined))
    })
    if (listened === undefined) {
      // The lock lasts as long as the process; it keeps nothing alive.
      server.unref()
      return { release: () => new Promise<void>((resolve) => server.close(() => resolve())) }
    }
    if (errnoOf(listened) !== 'EADDRINUSE') throw listened
    const holder = await askHolder(address)
    if (holder) return holder
    // Nobody answered: the holder died between our listen and our question (abstract), or left its
    // socket file behind (elsewhere), which is ours to remove.
    if (!address.startsWith('\0')) {
      try { unlinkSync(address) } catch (err) { if (errnoOf(err) !== 'ENOENT') throw err }
    }
    if (attempt >= 5) throw new Error(`could not take the lock of DATA_DIR ${dataDir}: its address is in use but nothing answers there`)
  }
}

export function isLockHolder(x: DataDirLock | LockHolder): x is LockHolder {
  return 'pid' in x
}

/** Named by the directory's identity (device and inode), so a symlink or bind mount to it is the same lock. */
function lockAddress(dataDir: string): string {
  const { dev, ino } = statSync(dataDir)
  const id = createHash('sha256').update(`${dev}:${ino}`).digest('hex').slice(0, 32)
  return process.platform === 'linux' ? `\0shipping-platform-data-dir-${id}` : join(tmpdir(), `shipping-platform-${id}.lock`)
}

function askHolder(address: string): Promise<LockHolder | undefined> {
  return new Promise((resolve) => {
    let text = ''
    const socket = net.connect(address)
    socket.setTimeout(2_000, () => socket.destroy())
    socket.on('data', (chunk) => { text += chunk })
    socket.on('error', () => resolve(undefined))
    socket.on('close', () => {
      try {
        const holder = JSON.parse(text) as LockHolder
        resolve(typeof holder.pid === 'number' ? holder : undefined)
      } catch {
        resolve(undefined)
      }
    })
  })
}
