import t from 'tap'
import { CompiledQuery, sql } from 'kysely'
import { inlineParameters, inlineStatements, REQUIRED_ROW_COUNT_MISSED } from '../../../src/infrastructure/database/inline-statements.js'
import { openTestDatabase } from '../../helpers/test-database.js'

// Values that a parameter carries safely and a hand-built literal often does not.
const awkward = [
  `it's`, `back\\slash`, `both \\' of them`, `"quoted"`, `$1 inside text`, `semi; colon -- comment`, `línea\nnueva\ttab`, '', '日本語 ✓',
]

t.test('inlined literals read back exactly as bound parameters do', async (t) => {
  const database = await openTestDatabase(t, { migrate: true })
  const db = database.db
  const date = new Date('2026-11-22T10:11:12.345Z')
  const json = { name: `O'Brien \\ "x"`, list: [1, null, 'a,b'], nested: { emoji: '📦' } }
  const q = sql<Record<string, unknown>>`
    select ${awkward[0]}::text as a0, ${awkward[1]}::text as a1, ${awkward[2]}::text as a2, ${awkward[3]}::text as a3,
           ${awkward[4]}::text as a4, ${awkward[5]}::text as a5, ${awkward[6]}::text as a6, ${awkward[7]}::text as a7,
           ${awkward[8]}::text as a8, ${null}::text as nothing, ${42}::int as n, ${-1.5}::float8 as f, ${true}::boolean as yes,
           ${date}::timestamptz as at, ${JSON.stringify(json)}::jsonb as doc, ${awkward}::text[] as arr,
           ${['x', null, 'y"z']}::text[] as with_null, ${Buffer.from([0, 1, 254, 255])}::bytea as bytes,
           '$2 in a literal' as lit, "a$1" as ident
    from (select 1 as "a$1") s`.compile(db)
  const bound = (await db.executeQuery(q)).rows[0]
  const text = inlineParameters(q)
  const outsideQuotes = text.replace(/E?'(?:[^']|'')*'|"(?:[^"]|"")*"/g, '')
  t.notMatch(outsideQuotes, /\$\d/, 'no placeholder is left outside quotes')
  const inlined = (await db.executeQuery(CompiledQuery.raw(text))).rows[0]
  t.same(inlined, bound, 'every column equals the parameter-bound one')
  t.same((bound as Record<string, unknown>).doc, json)
  t.equal((inlined as Record<string, unknown>).lit, '$2 in a literal', 'a placeholder-like text in a literal is left alone')
})

t.test('refuses what it cannot inline safely', async (t) => {
  t.throws(() => inlineParameters(CompiledQuery.raw('select $$ $1 $$', ['x'])), /dollar-quoted/)
  t.throws(() => inlineParameters(CompiledQuery.raw('select $2', ['x'])), /missing parameter \$2/)
  t.throws(() => inlineParameters(CompiledQuery.raw(`select 'open $1`, ['x'])), /unterminated quote/)
  t.throws(() => inlineParameters(CompiledQuery.raw(`select $1 -- it's`, ['x'])), /comment/)
  t.throws(() => inlineParameters(CompiledQuery.raw(`select /* $1 */ $1`, ['x'])), /comment/)
  t.equal(inlineParameters(CompiledQuery.raw(`select '--', 2 - -1, $1`, ['x'])), `select '--', 2 - -1, E'x'`)
  t.equal(inlineParameters(CompiledQuery.raw('select 1', [])), 'select 1')
})

t.test('sendStatements: one string, one implicit transaction, each statement\'s rows', async (t) => {
  const database = await openTestDatabase(t, { migrate: true })
  if (!database.sendStatements) throw new Error('a PostgreSQL database sends statement strings')
  const db = database.db
  await sql`create table if not exists inline_probe (k text primary key, v int not null)`.execute(db)
  const put = (k: string, v: number) => sql`insert into inline_probe (k, v) values (${k}, ${v}) returning k, v`.compile(db)
  const rows = await database.sendStatements(inlineStatements([put(`a'1`, 1), put('b\\2', 2)]))
  t.same(rows, [[{ k: `a'1`, v: 1 }], [{ k: 'b\\2', v: 2 }]], 'one result per statement, in order')

  // A failing guard rolls the whole string back, and the connection stays usable.
  const guard = sql`select require_row_count(${1}::bigint, ${2}::int, 'probe')`.compile(db)
  const err = await database.sendStatements(inlineStatements([put('c', 3), guard])).then(() => undefined, (e: unknown) => e)
  t.equal((err as { code?: string })?.code, REQUIRED_ROW_COUNT_MISSED, 'the guard raises its own SQLSTATE')
  t.match(String((err as Error).message), /probe: 1 of 2 rows/)
  const left = await sql<{ k: string }>`select k from inline_probe order by k`.execute(db)
  t.same(left.rows.map((r) => r.k), [`a'1`, 'b\\2'], 'the statement before the failing guard was rolled back')
  for (let i = 0; i < 25; i++) await database.sendStatements(inlineStatements([put(`x${i}`, i)]))
  t.equal(Number((await sql<{ n: number }>`select count(*)::int as n from inline_probe`.execute(db)).rows[0]!.n), 27, 'every pooled connection was left clean')
})
