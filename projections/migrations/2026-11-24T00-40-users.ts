import type { Kysely } from 'kysely'

// Frozen once landed: users of organizations (dispatchers and drivers). Their tokens go to
// access_tokens with kind `user` and the user id as subject.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('phone', 'text')
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('deactivated_at', 'timestamptz')
    .execute()
  await db.schema.createIndex('users_organization_idx').on('users').columns(['organization_id', 'created_at', 'id']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('users').execute()
}
