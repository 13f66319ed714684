import { chownSync, cpSync, existsSync, lstatSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import type { PostgresBinaries } from './binaries.js'
import type { ServerUser } from './server-user.js'

/**
 * The binaries' whole tree (`native/`: bin, lib, share, found relative to the binaries) copied to
 * `target` for `user`, once per source: a stamp names the tree it came from and its size, so an
 * upgraded install (other binaries) is copied again. Written aside and renamed into place, so a
 * start killed mid-copy leaves no half tree that looks whole.
 */
export function copiedBinaries(from: PostgresBinaries, target: string, user: ServerUser, log: (m: string) => void): PostgresBinaries {
  const native = dirname(dirname(from.postgres))
  const stamp = `${native}\n${lstatSync(from.postgres).size} ${lstatSync(from.postgres).mtimeMs}\n`
  const stampFile = join(target, '.copied-from')
  const copied = { initdb: join(target, 'bin', basename(from.initdb)), postgres: join(target, 'bin', basename(from.postgres)) }
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return copied
  log(`the PostgreSQL binaries in ${native} are out of reach of the user ${user.name}: copied to ${target}`)
  const aside = `${target}.copying`
  rmSync(aside, { recursive: true, force: true })
  cpSync(native, aside, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true })
  writeFileSync(join(aside, '.copied-from'), stamp)
  chownTree(aside, user)
  rmSync(target, { recursive: true, force: true })
  renameSync(aside, target)
  return copied
}

function chownTree(path: string, user: ServerUser): void {
  const st = lstatSync(path)
  if (st.isSymbolicLink()) return
  chownSync(path, user.uid, user.gid)
  if (st.isDirectory()) for (const entry of readdirSync(path)) chownTree(join(path, entry), user)
}
