import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'kysely'
import t from 'tap'
import { repoRoot } from '../helpers/cli-process.js'
import { openTestDatabase } from '../helpers/test-database.js'

/**
 * docs/read-models.md against the database the migrations make: every table of `read_model` (and
 * the audit tables it documents in `public`) has a section, and each section's table lists exactly
 * the columns the database has, with their types and whether they may be null (issue 31 §4: the
 * doc lacked tables and columns and called nullable columns required).
 *
 * A section is `### \`table\`` followed by a `| Column | Type | Meaning |` table. A row may name
 * several columns (`a, b`), with one type for all or one per column (`bigint null, text`); a type
 * says `null` when the column may be null; `PK` and `unique` are read over.
 */

interface DocColumn { table: string; column: string; type: string; nullable: boolean }
interface DocTable { schema: string; name: string; columns: DocColumn[] }

/** The doc's spelling of a type, as information_schema.columns.data_type says it. */
const TYPES: Record<string, string> = {
  text: 'text', bigint: 'bigint', integer: 'integer', smallint: 'smallint', double: 'double precision', boolean: 'boolean',
  jsonb: 'jsonb', timestamptz: 'timestamp with time zone', date: 'date', uuid: 'uuid', bytea: 'bytea', varchar: 'character varying',
}

function parseDoc(markdown: string): { tables: DocTable[]; problems: string[] } {
  const tables: DocTable[] = []
  const problems: string[] = []
  let schema = 'read_model'
  let current: DocTable | undefined
  let inColumns = false
  for (const line of markdown.split('\n')) {
    if (line.startsWith('## ')) {
      schema = line.includes('schema `public`') ? 'public' : 'read_model'
      current = undefined
      continue
    }
    if (line.startsWith('### ')) {
      // Any other third-level heading (an example) ends the table's section.
      const heading = /^### `([a-z_0-9]+)`/.exec(line)
      current = heading ? { schema, name: heading[1]!, columns: [] } : undefined
      if (current) tables.push(current)
      inColumns = false
      continue
    }
    if (!current) continue
    if (/^\| *Column *\| *Type *\|/.test(line)) { inColumns = true; continue }
    if (!inColumns) continue
    if (!line.startsWith('|')) { inColumns = false; continue }
    if (/^\|[-| ]+\|$/.test(line)) continue
    const [names = '', types = ''] = line.split(/(?<!\\)\|/).slice(1).map((c) => c.trim())
    const columns = names.split(',').map((n) => n.trim())
    const parts = types.replace(/\(PK\)/g, '').split(',').map((p) => p.trim())
    if (parts.length !== columns.length && parts.length !== 1) {
      problems.push(`${current.name}: the row "${names}" gives ${parts.length} types for ${columns.length} columns`)
      continue
    }
    columns.forEach((column, i) => {
      const part = parts.length === 1 ? parts[0]! : parts[i]!
      const type = TYPES[part.split(/\s+/)[0] ?? '']
      if (!/^[a-z_0-9]+$/.test(column) || !type) {
        problems.push(`${current!.name}: cannot read the row "${names} | ${types}"`)
        return
      }
      current!.columns.push({ table: current!.name, column, type, nullable: /\bnull\b/.test(part) })
    })
  }
  return { tables, problems }
}

const doc = parseDoc(readFileSync(join(repoRoot, 'docs/read-models.md'), 'utf8'))

t.test('the doc reads as sections of column tables', async (t) => {
  t.same(doc.problems, [])
  const names = doc.tables.map((d) => `${d.schema}.${d.name}`)
  t.same(names.filter((n, i) => names.indexOf(n) !== i), [], 'no table documented twice')
  for (const table of doc.tables) t.ok(table.columns.length > 0, `${table.name} lists its columns`)
})

t.test('every table, column, type and nullability of the doc is the database\'s', async (t) => {
  const db = await openTestDatabase(t, { readModels: true })
  const actual = (await sql<{ table_schema: string; table_name: string; column_name: string; data_type: string; is_nullable: string }>`
    select c.table_schema, c.table_name, c.column_name, c.data_type, c.is_nullable
    from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
    where c.table_schema = 'read_model' or (c.table_schema = 'public' and c.table_name like 'audit\\_%')
    order by c.table_schema, c.table_name, c.ordinal_position`.execute(db.db)).rows
  const key = (schema: string, table: string) => `${schema}.${table}`
  const inDb = new Map<string, typeof actual>()
  for (const c of actual) inDb.set(key(c.table_schema, c.table_name), [...(inDb.get(key(c.table_schema, c.table_name)) ?? []), c])
  const inDoc = new Map(doc.tables.map((d) => [key(d.schema, d.name), d]))

  t.same([...inDb.keys()].filter((k) => !inDoc.has(k)), [], 'every table of the database is documented')
  t.same([...inDoc.keys()].filter((k) => !inDb.has(k)), [], 'every documented table exists')

  const problems: string[] = []
  for (const [k, columns] of inDb) {
    const documented = inDoc.get(k)
    if (!documented) continue
    const byName = new Map(documented.columns.map((c) => [c.column, c]))
    for (const c of columns) {
      const d = byName.get(c.column_name)
      if (!d) { problems.push(`${k}.${c.column_name}: not documented`); continue }
      if (d.type !== c.data_type) problems.push(`${k}.${c.column_name}: documented as ${d.type}, is ${c.data_type}`)
      const nullable = c.is_nullable === 'YES'
      if (d.nullable !== nullable) problems.push(`${k}.${c.column_name}: documented as ${d.nullable ? 'nullable' : 'required'}, is ${nullable ? 'nullable' : 'not null'}`)
    }
    const names = new Set(columns.map((c) => c.column_name))
    for (const d of documented.columns) if (!names.has(d.column)) problems.push(`${k}.${d.column}: documented, but no such column`)
  }
  t.same(problems, [], 'each column as the database has it')
})
