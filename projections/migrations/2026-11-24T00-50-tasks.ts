import type { Kysely } from 'kysely'

// Frozen once landed: tasks (DESIGN §3.9), one row per `task-<ulid>` stream. Address, time windows,
// dependencies, requirements and attachments are small documents read whole with the task: jsonb.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('tasks')
    .addColumn('ulid', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('address', 'jsonb', (c) => c.notNull())
    .addColumn('shipment_id', 'bigint')
    .addColumn('workflow_id', 'bigint')
    .addColumn('step_key', 'text')
    .addColumn('assignee_id', 'text')
    .addColumn('route_id', 'bigint')
    .addColumn('position', 'integer')
    .addColumn('time_windows', 'jsonb', (c) => c.notNull())
    .addColumn('duration_minutes', 'integer')
    .addColumn('dependencies', 'jsonb', (c) => c.notNull())
    .addColumn('requirements', 'jsonb', (c) => c.notNull())
    .addColumn('load_grams', 'bigint', (c) => c.notNull())
    .addColumn('load_volume_cm3', 'bigint', (c) => c.notNull())
    .addColumn('load_packages', 'bigint', (c) => c.notNull())
    .addColumn('signed_by', 'text')
    .addColumn('barcode', 'text')
    .addColumn('failure_reason', 'text')
    .addColumn('notes', 'text')
    .addColumn('external_reference', 'text')
    .addColumn('attachments', 'jsonb', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz')
    .addColumn('arrived_at', 'timestamptz')
    .addColumn('completed_at', 'timestamptz')
    .addColumn('failed_at', 'timestamptz')
    .addColumn('cancelled_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('stream_version', 'integer', (c) => c.notNull())
    .execute()
  // Listings are per organization, oldest first; the filters narrow within it.
  await db.schema.createIndex('tasks_organization_idx').on('tasks').columns(['organization_id', 'created_at', 'ulid']).execute()
  await db.schema.createIndex('tasks_assignee_idx').on('tasks').columns(['organization_id', 'assignee_id']).execute()
  await db.schema.createIndex('tasks_shipment_idx').on('tasks').columns(['shipment_id']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('tasks').execute()
}
