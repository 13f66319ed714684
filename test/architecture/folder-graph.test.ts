import t from 'tap'
import { repoRoot } from '../helpers/cli-process.js'
import { folderCycles, folderEdges, oneLoop, sourceImports, specifiersOf } from './import-graph.js'

/**
 * The folders stand in layers (issue 35 point 4): no folder of src/, nor projections/ or
 * schemas/, reaches itself again through value imports of other folders. A folder is one of
 * src/ with all beneath it, a file that stands in src/ itself (main.ts, platform.ts, modules.ts,
 * config.ts), projections/ or schemas/. Imports of types only are left out: they vanish from
 * the JavaScript, so they make no order of loading.
 *
 * When this fails it names each circle by one loop through it, with an import of each step: that
 * import runs back up. Move what it takes to the folder below, or hand it in from above
 * (as main.ts hands the modules to the app), rather than importing upwards.
 */

t.test('the parser tells value imports from type-only ones', async (t) => {
  const found = specifiersOf([
    `import { a } from './a.js'`,
    `import type { B } from './b.js'`,
    `import { type C, type D } from './c.js'`,
    `import { type E, e } from './e.js'`,
    `import {\n  f,\n  g,\n} from './f.js'`,
    `import './side-effect.js'`,
    `import * as ns from './ns.js'`,
    `export { h } from './h.js'`,
    `export type { I } from './i.js'`,
    `const j = await import('./j.js')`,
    `import ts from 'typescript'`,
  ].join('\n'))
  t.same(found, [
    { specifier: './a.js', typeOnly: false },
    { specifier: './b.js', typeOnly: true },
    { specifier: './c.js', typeOnly: true },
    { specifier: './e.js', typeOnly: false },
    { specifier: './f.js', typeOnly: false },
    { specifier: './side-effect.js', typeOnly: false },
    { specifier: './ns.js', typeOnly: false },
    { specifier: './h.js', typeOnly: false },
    { specifier: './i.js', typeOnly: true },
    { specifier: './j.js', typeOnly: false },
  ])
})

t.test('no folder imports back up: the folder graph of value imports has no circle', async (t) => {
  const imports = sourceImports(repoRoot)
  const edges = folderEdges(imports.filter((i) => !i.typeOnly))
  // Not vacuous: the graph is read (the entry point composes the platform and the app).
  t.ok(edges.some((e) => e.from === 'src/main.ts' && e.to === 'src/platform.ts'), 'src/main.ts -> src/platform.ts is read')
  t.ok(edges.length > 500, `${edges.length} value imports cross folders`)
  const cycles = folderCycles(edges)
  const described = cycles.map((c) => [
    `${c.length} folders reach each other: ${c.join(', ')}; one loop:`,
    ...oneLoop(c, edges).map((e) => `  ${e.from} -> ${e.to}  (${e.via.file} imports ${e.via.target})`),
  ].join('\n'))
  t.same(described, [], described.join('\n\n') || 'no circle')
})

t.test('no file imports itself back either, types included', async (t) => {
  // A circle of files is a knot even when only types close it: neither file reads alone.
  const edges = folderEdges(sourceImports(repoRoot), (file) => file)
  const cycles = folderCycles(edges)
  const described = cycles.map((c) => oneLoop(c, edges).map((e) => `${e.from} -> ${e.to}${e.via.typeOnly ? ' (types)' : ''}`).join('\n'))
  t.same(described, [], described.join('\n\n') || 'no circle')
})

t.test('schemas/ is the ground: it imports nothing of src/ or projections/', async (t) => {
  // The payloads, the API's shapes and the typed client are read by every layer and read none;
  // the client's generator, which builds the app, is a checkout's tool (infra/client/client-types.ts).
  const out = sourceImports(repoRoot).filter((i) => i.file.startsWith('schemas/') && !i.target.startsWith('schemas/'))
  t.same(out.map((i) => `${i.file} -> ${i.target}`), [])
})
