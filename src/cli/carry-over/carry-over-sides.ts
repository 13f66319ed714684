import { CompiledQuery, type Kysely } from 'kysely'

/**
 * One end of a carry-over (the old PGlite, the new PostgreSQL database), as raw SQL with
 * positional parameters: the same checks run on both ends, whichever driver is underneath.
 */
export interface SqlSide {
  rows<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>
}

/** What of `@electric-sql/pglite`'s client the carry-over uses (its raw `query`). */
export interface PgliteQuery {
  query<T>(text: string, params?: unknown[]): Promise<{ rows: T[] }>
}

export const pgliteSide = (client: PgliteQuery): SqlSide => ({
  rows: async <T>(text: string, params: unknown[] = []) => (await client.query<T>(text, params)).rows,
})

export const kyselySide = (db: Kysely<any>): SqlSide => ({
  rows: async <T>(text: string, params: unknown[] = []) => (await db.executeQuery<T>(CompiledQuery.raw(text, params))).rows,
})

/** A double-quoted SQL identifier. */
export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`
