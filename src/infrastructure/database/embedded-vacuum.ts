import { sql, type Kysely } from 'kysely'

/**
 * PGlite runs no autovacuum daemon, so an embedded server that runs for weeks bloats: every
 * projector round rewrites its checkpoint rows, idempotency records and timers are deleted, read
 * models are upserted. This pass does by hand what autovacuum would: it vacuums (and analyzes)
 * the tables whose dead rows pass autovacuum's own default threshold (50 + 20 % of the table),
 * and analyzes those whose changes pass the analyze threshold (50 + 10 %). It works one table at a
 * time, so each statement holds the single connection only briefly.
 */
export async function vacuumBusyTables(db: Kysely<any>): Promise<{ vacuumed: string[]; analyzed: string[] }> {
  const { rows } = await sql<{ schema: string; table: string; vacuum: boolean }>`
    select schemaname as schema, relname as "table",
           n_dead_tup > 50 + 0.2 * greatest(n_live_tup, 0) as vacuum
      from pg_stat_user_tables
     where n_dead_tup > 50 + 0.2 * greatest(n_live_tup, 0)
        or n_mod_since_analyze > 50 + 0.1 * greatest(n_live_tup, 0)
     order by n_dead_tup desc`.execute(db)
  const vacuumed: string[] = []
  const analyzed: string[] = []
  for (const r of rows) {
    const name = sql.id(r.schema, r.table)
    if (r.vacuum) {
      await sql`vacuum (analyze) ${name}`.execute(db)
      vacuumed.push(`${r.schema}.${r.table}`)
    } else {
      await sql`analyze ${name}`.execute(db)
      analyzed.push(`${r.schema}.${r.table}`)
    }
  }
  return { vacuumed, analyzed }
}

export interface EmbeddedVacuumOptions {
  intervalMs: number
  /** A failed pass is reported and the next one tried on schedule; it never stops the server. */
  onError?: (err: unknown) => void
}

/** Runs `vacuumBusyTables` on a timer that never keeps the process alive; returns a stop function. */
export function startEmbeddedVacuum(db: Kysely<any>, opts: EmbeddedVacuumOptions): () => Promise<void> {
  let running: Promise<unknown> | undefined
  const timer = setInterval(() => {
    if (running) return
    running = vacuumBusyTables(db)
      .catch((err) => opts.onError?.(err))
      .finally(() => { running = undefined })
  }, opts.intervalMs)
  timer.unref()
  return async () => {
    clearInterval(timer)
    await running
  }
}
