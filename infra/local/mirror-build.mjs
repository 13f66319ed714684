// The compiled tree the suite runs from (infra/local/test.sh): tsc has emitted every .ts of src,
// projections, schemas, test and infra as .js into BUILD; this puts everything else beside it, so a path a
// test or the server computes from its own file (import.meta.url) finds what it finds in the
// checkout: each source file not emitted (the .ts themselves, fixtures, data) and every other
// top-level entry (infra, docs, package.json, …) as a symlink to the checkout's, node_modules as
// bundle-packages.mjs writes it, and a .taprc that runs the .js without tsx.
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { mirrorNodeModules } from './bundle-packages.mjs'

const [root, build] = process.argv.slice(2).map((p) => join(p))
if (!root || !build) throw new Error('usage: mirror-build.mjs <checkout> <build dir>')
const COMPILED = ['src', 'projections', 'schemas', 'test', 'infra']
const SKIP = new Set([...COMPILED, '.local', '.git', '.tap', 'dist', '.taprc', 'node_modules'])

function link(source, target) {
  if (existsSync(target)) return
  mkdirSync(dirname(target), { recursive: true })
  symlinkSync(source, target)
}

function walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) { if (entry.name !== 'node_modules') walk(path) } else link(path, join(build, relative(root, path)))
  }
}

for (const top of COMPILED) if (existsSync(join(root, top))) walk(join(root, top))
for (const entry of readdirSync(root)) if (!SKIP.has(entry)) link(join(root, entry), join(build, entry))
await mirrorNodeModules(root, build)

// tsconfig's `paths` (tsx honours them at run time; tsc's output keeps the bare name): each mapped
// name is a package in test/node_modules whose entry re-exports the compiled target.
const { compilerOptions } = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8'))
for (const [name, [target]] of Object.entries(compilerOptions.paths ?? {})) {
  const dir = join(build, 'test', 'node_modules', name)
  mkdirSync(dir, { recursive: true })
  const entry = relative(dir, join(build, target.replace(/\.ts$/, '.js')))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, type: 'module', exports: './index.js' }))
  writeFileSync(join(dir, 'index.js'), `export * from ${JSON.stringify(entry)}\n`)
}

// The checkout's .taprc, for JavaScript: no tsx, the compiled test files.
const taprc = readFileSync(join(root, '.taprc'), 'utf8')
  .replace(/^node-arg:\n(?:\s+- .*\n)+/m, '')
  .replace(/\.test\.ts/g, '.test.js')
writeFileSync(join(build, '.taprc'), `# Written by infra/local/mirror-build.mjs from the checkout's .taprc.\n${taprc}`)
