import { type Kysely, sql } from 'kysely'

// Frozen once landed. The tasks listing flat at a million (issue 32): an index per filter, each
// (organization_id, filter, created_at, ulid) so a page oldest first stops after its rows; the
// count of each organization's tasks per (assignee, status, type, UTC day of created_at), so
// `meta.total` and a deep `page=` are found without scanning; and the UTC days each task's time
// windows touch, so `shift_date` reads one day's index range instead of every task's windows.
// Backfilled from `tasks`: an upgraded database lists correctly before any rebuild.
// Meanings: docs/read-models.md.
export async function up(db: Kysely<any>): Promise<void> {
  const index = (name: string, column: string, partial: boolean) => {
    const q = db.schema.createIndex(name).on('tasks').columns(['organization_id', column, 'created_at', 'ulid'])
    return (partial ? q.where(sql.ref(column), 'is not', null) : q).execute()
  }
  await index('tasks_org_status_created_idx', 'status', false)
  await index('tasks_org_type_created_idx', 'type', false)
  await index('tasks_org_assignee_created_idx', 'assignee_id', true)
  await index('tasks_org_route_created_idx', 'route_id', true)
  await index('tasks_org_workflow_created_idx', 'workflow_id', true)
  await index('tasks_org_shipment_created_idx', 'shipment_id', true)
  // (organization_id, assignee_id) is a prefix of the new assignee index.
  await db.schema.dropIndex('tasks_assignee_idx').execute()

  await db.schema.createTable('task_listing_counts')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('assignee_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('day', 'date', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('task_listing_counts_pk', ['org_id', 'assignee_id', 'status', 'type', 'day'])
    .execute()
  const day = sql`(${sql.ref('t.created_at')} at time zone 'UTC')::date`
  // Every task counts in its organization's '' row, and an assigned one in its assignee's row too.
  const scopes = db.selectFrom('tasks as t')
    .select([sql.ref('t.organization_id').as('org_id'), sql.lit('').as('assignee_id'), 't.status', 't.type', day.as('day')])
    .unionAll(db.selectFrom('tasks as t')
      .select([sql.ref('t.organization_id').as('org_id'), 't.assignee_id', 't.status', 't.type', day.as('day')])
      .where('t.assignee_id', 'is not', null))
  await db.insertInto('task_listing_counts').columns(['org_id', 'assignee_id', 'status', 'type', 'day', 'n'])
    .expression(db.selectFrom(scopes.as('s')).select(['org_id', 'assignee_id', 'status', 'type', 'day', sql`count(*)`.as('n')])
      .groupBy(['org_id', 'assignee_id', 'status', 'type', 'day']))
    .execute()

  await db.schema.createTable('task_shift_days')
    .addColumn('ulid', 'text', (c) => c.notNull())
    .addColumn('day', 'date', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('task_shift_days_pk', ['ulid', 'day'])
    .execute()
  await db.schema.createIndex('task_shift_days_org_day_created_idx').on('task_shift_days')
    .columns(['org_id', 'day', 'created_at', 'ulid']).execute()
  // A window [from, to) touches each UTC day from from's to the one holding its last instant.
  const windows = db.selectFrom('tasks as t')
    .select(['t.ulid', 't.organization_id', 't.created_at', sql`jsonb_array_elements(t.time_windows)`.as('w')])
  const days = db.selectFrom(windows.as('x')).select(['x.ulid', 'x.organization_id', 'x.created_at',
    sql`generate_series(((x.w->>'from')::timestamptz at time zone 'UTC')::date,
      (((x.w->>'to')::timestamptz - interval '1 microsecond') at time zone 'UTC')::date, interval '1 day')::date`.as('day')])
  await db.insertInto('task_shift_days').columns(['ulid', 'day', 'org_id', 'created_at'])
    .expression(db.selectFrom(days.as('d')).select(['d.ulid', 'd.day', 'd.organization_id', 'd.created_at']).distinct())
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('task_shift_days').execute()
  await db.schema.dropTable('task_listing_counts').execute()
  await db.schema.createIndex('tasks_assignee_idx').on('tasks').columns(['organization_id', 'assignee_id']).execute()
  for (const c of ['status', 'type', 'assignee', 'route', 'workflow', 'shipment']) await db.schema.dropIndex(`tasks_org_${c}_created_idx`).execute()
}
