import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'

/**
 * The source tree's imports as the TypeScript parser reads them (not by pattern: an import may
 * span lines, name only types, or be a dynamic `import()`), for the architecture tests.
 */

/** What the layers are made of; test/ and infra/ stand outside them. */
export const SOURCE_ROOTS = ['src', 'projections', 'schemas']

export interface Import {
  /** The importing file, from the repository's root. */
  file: string
  /** The imported file (`.ts`), from the repository's root. */
  target: string
  /** Only types are taken (`import type`, or every name `type`): nothing of it runs. */
  typeOnly: boolean
}

function sourceFiles(root: string, dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...sourceFiles(root, path))
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path)
  }
  return out
}

function typeOnly(node: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isImportDeclaration(node)) {
    const clause = node.importClause
    if (!clause) return false // `import './x.js'` runs the module
    if (clause.isTypeOnly) return true
    if (clause.name) return false
    const bindings = clause.namedBindings
    if (!bindings || ts.isNamespaceImport(bindings)) return false
    return bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly)
  }
  if (node.isTypeOnly) return true
  const clause = node.exportClause
  return !!clause && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly)
}

/** The relative specifiers of one file: static imports, re-exports and `import('…')` with a literal. */
export function specifiersOf(text: string, fileName = 'file.ts'): { specifier: string; typeOnly: boolean }[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false)
  const found: { specifier: string; typeOnly: boolean }[] = []
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: typeOnly(node) })
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword
      && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) {
      found.push({ specifier: node.arguments[0].text, typeOnly: false })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found.filter((s) => s.specifier.startsWith('.'))
}

/** Every import from a file of the source roots to another file of them. */
export function sourceImports(root: string): Import[] {
  const imports: Import[] = []
  for (const top of SOURCE_ROOTS) {
    for (const file of sourceFiles(root, top)) {
      for (const { specifier, typeOnly } of specifiersOf(readFileSync(join(root, file), 'utf8'), file)) {
        const target = relative(root, resolve(root, dirname(file), specifier.replace(/\.js$/, '.ts')))
        if (SOURCE_ROOTS.some((r) => target.startsWith(`${r}/`))) imports.push({ file, target, typeOnly })
      }
    }
  }
  return imports
}

/**
 * The folder a file belongs to, as the layers are drawn: a folder of src/ with all beneath it
 * (`src/http`, `src/routes`), a file that stands in src/ itself (`src/main.ts`), projections and schemas.
 */
export function folderOf(file: string): string {
  const parts = file.split('/')
  return parts[0] === 'src' ? parts.slice(0, 2).join('/') : parts[0]!
}

export interface FolderEdge { from: string; to: string; via: Import }

/** The imports that cross from one folder to another. */
export function folderEdges(imports: Import[], folder: (file: string) => string = folderOf): FolderEdge[] {
  return imports.map((via) => ({ from: folder(via.file), to: folder(via.target), via })).filter((e) => e.from !== e.to)
}

/** The strongly connected components of more than one folder (Tarjan), each sorted. */
export function folderCycles(edges: FolderEdge[]): string[][] {
  const next = new Map<string, Set<string>>()
  for (const { from, to } of edges) {
    if (!next.has(from)) next.set(from, new Set())
    if (!next.has(to)) next.set(to, new Set())
    next.get(from)!.add(to)
  }
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const connect = (v: string): void => {
    index.set(v, counter)
    low.set(v, counter)
    counter += 1
    stack.push(v)
    onStack.add(v)
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        connect(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!))
      }
    }
    if (low.get(v) !== index.get(v)) return
    const component: string[] = []
    let w: string
    do {
      w = stack.pop()!
      onStack.delete(w)
      component.push(w)
    } while (w !== v)
    if (component.length > 1) components.push(component.sort())
  }
  for (const v of [...next.keys()].sort()) if (!index.has(v)) connect(v)
  return components
}

/** A shortest loop through a component, each step with an import that makes it: where to look first. */
export function oneLoop(component: string[], edges: FolderEdge[]): FolderEdge[] {
  const inside = new Set(component)
  const start = component[0]!
  const cameBy = new Map<string, FolderEdge>()
  const queue = [start]
  while (queue.length > 0) {
    const v = queue.shift()!
    for (const e of edges) {
      if (e.from !== v || !inside.has(e.to)) continue
      if (e.to === start) {
        const loop = [e]
        for (let at = v; at !== start;) {
          const step = cameBy.get(at)!
          loop.unshift(step)
          at = step.from
        }
        return loop
      }
      if (!cameBy.has(e.to)) {
        cameBy.set(e.to, e)
        queue.push(e.to)
      }
    }
  }
  return []
}
