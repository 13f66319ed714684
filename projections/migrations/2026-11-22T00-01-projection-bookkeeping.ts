import type { Kysely } from 'kysely'

// Frozen once landed. Read-model migrations use the schema builder only: `rebuild` runs them in a fresh schema.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('projection_checkpoints')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('checkpoint', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await db.schema.createTable('projection_parked')
    .addColumn('projection', 'text', (c) => c.notNull())
    .addColumn('event_id', 'uuid', (c) => c.notNull())
    .addColumn('position', 'text', (c) => c.notNull())
    .addColumn('error', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('projection_parked_pkey', ['projection', 'event_id'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('projection_parked').execute()
  await db.schema.dropTable('projection_checkpoints').execute()
}
