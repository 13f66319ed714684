// What the shipped code imports against what package.json declares: a production dependency
// nobody imports is dead weight in the image (and in the licence review); a package the server
// imports but only declares for development would be missing from a production install.
import t from 'tap'
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..', '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>; devDependencies: Record<string, string>; scripts: Record<string, string>
}

/** A folder with a package.json of its own is another package (the typed client, schemas/client), with its own dependencies. */
const ownPackage = (dir: string) => existsSync(join(dir, 'package.json'))

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return ownPackage(path) ? [] : sourceFiles(path)
    return /\.(ts|js|mjs|cjs)$/.test(name) ? [path] : []
  })
}

/** `lodash/fp` → `lodash`, `@scope/pkg/deep` → `@scope/pkg`; node: built-ins and relative paths → null. */
export function packageOf(specifier: string): string | null {
  if (specifier.startsWith('.') || specifier.startsWith('node:') || specifier.startsWith('/')) return null
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!
}

// Static imports and re-exports (at a statement's start), side-effect imports, dynamic imports,
// require(), require.resolve() and import.meta.resolve() with a literal; not `.from('table')` in a query.
const SPECIFIERS = [
  /^\s*(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/gm,
  /^\s*import\s*['"]([^'"]+)['"]/gm,
  /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  /\brequire(?:\.resolve)?\s*\(\s*['"`]([^'"`$]+)['"`]/g,
  /\bimport\.meta\.resolve\s*\(\s*['"`]([^'"`$]+)['"`]/g,
]

function importedPackages(files: string[]): Map<string, string> {
  const found = new Map<string, string>() // package → first file that imports it
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    for (const pattern of SPECIFIERS) {
      for (const m of text.matchAll(pattern)) {
        const name = packageOf(m[1]!)
        if (name && !found.has(name)) found.set(name, file.slice(root.length + 1))
      }
    }
  }
  return found
}

// What the server's process loads: its code, and what its npm scripts run (`node --import tsx`).
const shipped = importedPackages(['src', 'projections', 'schemas'].flatMap((d) => sourceFiles(join(root, d))))
const scriptLoaders = new Set(Object.values(pkg.scripts).flatMap((s) => [...s.matchAll(/--import\s+(\S+)/g)].map((m) => m[1]!)))

t.test('the import scanner reads package names', async (t) => {
  t.equal(packageOf('@nats-io/jetstream/lib/x'), '@nats-io/jetstream')
  t.equal(packageOf('country-state-city/lib/assets/city.json'), 'country-state-city')
  t.equal(packageOf('node:fs'), null)
  t.equal(packageOf('../x.js'), null)
  t.ok(shipped.has('fastify') && shipped.has('kysely'), 'finds the obvious ones')
})

t.test('every production dependency is used by the shipped code or its npm scripts', async (t) => {
  const unused = Object.keys(pkg.dependencies).filter((name) => !shipped.has(name) && !scriptLoaders.has(name))
  t.same(unused, [], 'declared in "dependencies" but imported nowhere in src/, projections/ or schemas/')
})

t.test('everything the shipped code imports is a production dependency', async (t) => {
  const missing = [...shipped].filter(([name]) => !(name in pkg.dependencies)).map(([name, file]) => `${name} (${file})`)
  t.same(missing, [], 'imported by shipped code but not in "dependencies" (a production install would lack it)')
})

t.test('the typed client declares what it imports', async (t) => {
  const dir = join(root, 'schemas', 'client')
  const client = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies?: Record<string, string> }
  const imported = importedPackages(['index.ts'].map((f) => join(dir, f)))
  t.same([...imported.keys()].filter((name) => !(name in client.dependencies)), [], 'the package\'s code imports only its dependencies')
  t.equal(client.dependencies['openapi-fetch'], pkg.devDependencies['openapi-fetch'], 'the repository tests it with the version it declares')
  // Its generator (a checkout's tool, infra/client: it builds the app) uses development dependencies only.
  const tooling = importedPackages(sourceFiles(join(root, 'infra', 'client')))
  t.ok(tooling.has('openapi-typescript'), 'the generator is found')
  t.same([...tooling.keys()].filter((name) => !(name in pkg.devDependencies) && !(name in pkg.dependencies)), [], 'its generator\'s packages are the repository\'s')
  t.notOk('openapi-typescript' in pkg.dependencies, 'and openapi-typescript is not shipped')
})
