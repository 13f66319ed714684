import { type Kysely, sql } from 'kysely'

// Frozen once landed: idempotent consumers record each handled message id in the transaction of
// the handler's own writes.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table bus_processed_messages (
      consumer text not null,
      message_id text not null,
      processed_at timestamptz not null default now(),
      primary key (consumer, message_id)
    )`.execute(db)
  await sql`create index bus_processed_messages_processed_at_idx on bus_processed_messages (processed_at)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table bus_processed_messages`.execute(db)
}
