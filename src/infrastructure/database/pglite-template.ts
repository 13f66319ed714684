import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { migrationNames } from './migrate.js'

/**
 * A migrated, empty embedded database made once at install time (`npm ci` runs `prepare`), so
 * that a first `npm start` copies a directory instead of running initdb and every migration in
 * WebAssembly (about 6 s of a 13 s first start on a 2-core machine). The template is named after
 * the PGlite version and the migrations it has: a newer code base with more migrations simply does
 * not find one, and starts the slow way (its later migrations would run anyway).
 */
const require = createRequire(import.meta.url)

/** node_modules/@electric-sql/pglite (its package.json is not exported: found from its entry point). */
function pgliteRoot(): string {
  let dir = dirname(require.resolve('@electric-sql/pglite'))
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir)
  return dir
}

function templateName(): string {
  const { version } = JSON.parse(readFileSync(join(pgliteRoot(), 'package.json'), 'utf8')) as { version: string }
  const migrations = createHash('sha256').update(migrationNames().join('\n')).digest('hex').slice(0, 16)
  return `pglite-${version}-${migrations}`
}

/** node_modules/.cache/shipping-platform/<template>: beside the install it belongs to. */
export function templateDir(): string {
  return join(pgliteRoot(), '..', '..', '.cache', 'shipping-platform', templateName())
}

const COMPLETE = '.template-complete'

/** Seeds a new data directory from the template; false (nothing done) when it exists or there is none. */
export function seedFromTemplate(dir: string): boolean {
  if (existsSync(join(dir, 'PG_VERSION'))) return false
  const template = templateDir()
  if (!existsSync(join(template, COMPLETE))) return false
  mkdirSync(dir, { recursive: true })
  cpSync(template, dir, { recursive: true, filter: (src) => !src.endsWith(COMPLETE) })
  return true
}

/**
 * Builds the template with `migrate` (run on a fresh database in a scratch directory), then moves
 * it into place, so that a half-built template is never seen.
 */
export async function buildTemplate(migrate: (dir: string) => Promise<void>): Promise<{ path: string; built: boolean }> {
  const path = templateDir()
  if (existsSync(join(path, COMPLETE))) return { path, built: false }
  const scratch = `${path}.building-${process.pid}`
  rmSync(scratch, { recursive: true, force: true })
  mkdirSync(scratch, { recursive: true })
  try {
    await migrate(scratch)
    readFileSync(join(scratch, 'PG_VERSION'))
    cpSync(join(scratch, 'PG_VERSION'), join(scratch, COMPLETE))
    rmSync(path, { recursive: true, force: true })
    renameSync(scratch, path)
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
  return { path, built: true }
}
