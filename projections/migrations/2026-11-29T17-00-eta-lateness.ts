import type { Kysely } from 'kysely'

// Frozen once landed: a task's stated ETA keeps the time window it was measured against and since
// when it has been predicted late (issue 37), so a read says whether and by how much it is late.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('task_etas')
    .addColumn('eta_window_from', 'timestamptz')
    .addColumn('eta_window_to', 'timestamptz')
    .addColumn('eta_late_since', 'timestamptz')
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('task_etas').dropColumn('eta_window_from').dropColumn('eta_window_to').dropColumn('eta_late_since').execute()
}
