import { type Kysely, sql } from 'kysely'

/**
 * Per read-model table, its row count and an md5 of its rows in a stable order: two databases (or
 * one before and after a rebuild) hold the same rows exactly when their checksums are equal.
 */
export async function readModelChecksums(db: Kysely<any>, tables: readonly string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const table of tables) {
    const r = await sql<{ n: number; md5: string }>`
      select count(*)::int as n, md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as md5 from ${sql.id('read_model', table)} x`.execute(db)
    out[table] = `${r.rows[0]!.n}:${r.rows[0]!.md5}`
  }
  return out
}
