// The compiled tree's node_modules (infra/local/mirror-build.mjs): a link to each package of the
// checkout's, except the few ESM packages made of hundreds of small files, which get one bundle per
// export (esbuild, shared code split into common chunks, so each package stays one module
// instance). Why: Node 20's ESM loader costs about a millisecond per file, and each test process
// loaded ~1,500 (typebox 679, kysely 263, libphonenumber-js 93): about a third of a test file's
// CPU went to resolving and loading modules. The code is the same version's, unchanged; other
// packages stay external, so a bundled package's imports resolve here as before.
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { build } from 'esbuild'

/** Bundled; kysely-pglite-dialect too, so that its `kysely` is the bundled one (one instance). */
const BUNDLED = ['typebox', 'kysely', 'libphonenumber-js', 'kysely-pglite-dialect']

const importTarget = (target) => {
  if (typeof target === 'string') return target
  if (target === null || typeof target !== 'object') return undefined
  return importTarget(target.import) ?? importTarget(target.default)
}

async function bundle(source, target) {
  const pkg = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8'))
  const entryPoints = {}
  const exports = { './package.json': './package.json' }
  const entries = typeof pkg.exports === 'object' && pkg.exports !== null ? pkg.exports : { '.': pkg.module ?? pkg.main }
  for (const [subpath, spec] of Object.entries(entries)) {
    const file = importTarget(spec)
    if (subpath.includes('*') || !file || !/\.m?js$/.test(file)) continue
    const name = subpath === '.' ? 'index' : subpath.slice(2).replace(/\//g, '__')
    entryPoints[name] = join(source, file)
    exports[subpath] = `./${name}.mjs`
  }
  await build({
    entryPoints, outdir: target, outExtension: { '.js': '.mjs' }, bundle: true, splitting: true, format: 'esm',
    platform: 'node', target: 'node20', packages: 'external', logLevel: 'warning',
  })
  writeFileSync(join(target, 'package.json'), JSON.stringify({ name: pkg.name, version: pkg.version, type: 'module', exports }, null, 2))
}

/** Writes BUILD/node_modules from ROOT/node_modules: links, and the bundles above. */
export async function mirrorNodeModules(root, buildDir) {
  const from = join(root, 'node_modules')
  const to = join(buildDir, 'node_modules')
  mkdirSync(to, { recursive: true })
  for (const entry of readdirSync(from)) {
    if (BUNDLED.includes(entry)) continue
    if (entry.startsWith('@')) {
      mkdirSync(join(to, entry), { recursive: true })
      for (const scoped of readdirSync(join(from, entry))) {
        if (!existsSync(join(to, entry, scoped))) symlinkSync(join(from, entry, scoped), join(to, entry, scoped))
      }
    } else if (!existsSync(join(to, entry))) {
      symlinkSync(join(from, entry), join(to, entry))
    }
  }
  await Promise.all(BUNDLED.filter((name) => existsSync(join(from, name))).map((name) => bundle(join(from, name), join(to, name))))
}
