// Counts the type assertions (`x as T`, `<T>x`; not `as const`) in src/ and projections/ of a
// checkout, as issue 22 measures them: `node infra/local/count-casts.mjs [dir] [-v]` (-v: per file).
import ts from 'typescript'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

const root = process.argv[2] && process.argv[2] !== '-v' ? process.argv[2] : '.'
const files = []
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) { if (name !== 'node_modules') walk(path) } else if (path.endsWith('.ts') && !path.endsWith('.d.ts')) files.push(path)
  }
}
for (const dir of ['src', 'projections']) walk(join(root, dir))

let total = 0, asAny = 0
const perFile = new Map()
for (const file of files) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
  const visit = (node) => {
    const assertion = ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)
    if (assertion && !(ts.isTypeReferenceNode(node.type) && node.type.typeName.getText(source) === 'const')) {
      total++
      perFile.set(file, (perFile.get(file) ?? 0) + 1)
      if (node.type.kind === ts.SyntaxKind.AnyKeyword) asAny++
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
}
console.log(`${total} type assertions in src/ and projections/ (${asAny} of them as any)`)
if (process.argv.includes('-v')) for (const [file, n] of [...perFile].sort((a, b) => b[1] - a[1])) console.log(String(n).padStart(4), relative(root, file))
