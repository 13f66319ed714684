import { type Kysely, sql } from 'kysely'

// Frozen once landed: where each event consumer began in the log, written once at its first
// start (src/processes/consumer-start.ts). A null position means "from the beginning": the event
// consumers that already ran on the bus (the relay has run here, and it always ran beside them)
// keep every event the bus still holds for them, rather than skipping what arrived during the upgrade.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table bus_consumer_start_positions (
      consumer text primary key,
      position text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`
    insert into bus_consumer_start_positions (consumer, position)
    select name, null from (values ('carrier-notifier'), ('shipment-expiry-scheduler')) as v(name)
    where exists (select 1 from bus_relay_checkpoints)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table bus_consumer_start_positions`.execute(db)
}
