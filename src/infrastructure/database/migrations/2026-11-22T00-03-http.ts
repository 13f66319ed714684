import { type Kysely, sql } from 'kysely'

// Frozen once landed: idempotency records (DESIGN §3.3) and id sequences (DESIGN §2).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('idempotency_keys')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer', (c) => c.notNull())
    .addColumn('response_body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('idempotency_keys_pkey', ['scope', 'key'])
    .execute()
  await sql`create sequence organization_internal_id_seq`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop sequence organization_internal_id_seq`.execute(db)
  await db.schema.dropTable('idempotency_keys').execute()
}
