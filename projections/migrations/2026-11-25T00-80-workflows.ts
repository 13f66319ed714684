import { sql, type Kysely } from 'kysely'

// Frozen once landed: workflows, one row each (their tasks are rows of `tasks` with workflow_id).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('workflows')
    .addColumn('id', 'int8', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('blueprint_id', 'int8', (c) => c.notNull())
    .addColumn('blueprint_key', 'text', (c) => c.notNull())
    .addColumn('blueprint_version', 'integer', (c) => c.notNull())
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('shipment_id', 'int8')
    .addColumn('errors', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('completed_at', 'timestamptz')
    .addColumn('failed_at', 'timestamptz')
    .addColumn('cancelled_at', 'timestamptz')
    .execute()
  await db.schema.createIndex('workflows_organization_idx').on('workflows').columns(['organization_id', 'created_at', 'id']).execute()
  await db.schema.createIndex('workflows_shipment_idx').on('workflows').columns(['shipment_id']).execute()
  await db.schema.createIndex('tasks_workflow_idx').ifNotExists().on('tasks').columns(['workflow_id']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('workflows').execute()
}
