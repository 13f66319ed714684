import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { errnoOf } from '../../../shared/thrown.js'

/** What a running server writes in `<data>/postmaster.pid` (PostgreSQL's documented layout). */
export interface PostmasterPid {
  pid: number
  port: number
  /** The first of unix_socket_directories; empty when it listens on none. */
  socketDir: string
  /** The first of listen_addresses; empty when it listens on no TCP address. */
  listenAddress: string
  /** `starting`, `ready`, `stopping`, … once it has got that far. */
  status: string
}

export function readPostmasterPid(dataDir: string): PostmasterPid | undefined {
  let text: string
  try {
    text = readFileSync(join(dataDir, 'postmaster.pid'), 'utf8')
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return undefined
    throw err
  }
  const lines = text.split('\n')
  return {
    pid: Number(lines[0]),
    port: Number(lines[3]),
    socketDir: lines[4]?.trim() ?? '',
    listenAddress: lines[5]?.trim() ?? '',
    status: lines[7]?.trim() ?? '',
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return errnoOf(err) === 'EPERM'
  }
}

/**
 * Whether `pid` is a postmaster serving `dataDir`: a pid file outlives its server (kill -9, a host
 * reboot), and its number may since belong to an unrelated process that must not be signalled.
 */
export function isPostmasterOf(pid: number, dataDir: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return false
  const argv = commandLineOf(pid)
  if (!argv || basename(argv[0] ?? '') !== 'postgres') return false
  const d = argv.indexOf('-D')
  return d >= 0 && argv[d + 1] === dataDir
}

function commandLineOf(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '')
  } catch {
    try {
      // No /proc (macOS): ps joins the arguments with spaces, enough for a data directory without any.
      return execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' }).trim().split(/\s+/)
    } catch {
      return undefined
    }
  }
}
