import { type Kysely, sql } from 'kysely'

// Frozen once landed: drivers' positions (DESIGN §3.10: telemetry, not events) and the ETA engine's
// journal. A position is one row, written by one INSERT per reported batch; `transaction_id` lets
// the ETA engine read them in commit order without skipping one committed late (the log's own
// rule, DESIGN §2). Pruned after POSITION_RETENTION_DAYS by `received_at` (a BRIN index: rows
// arrive in that order). The journal records, for each engine round that took events from the
// log, where the positions stood when it did, so a rebuild replays events and positions in the
// order the live engine met them, and the clock ticks it recomputed on (docs/decisions.md, "ETAs").
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table driver_positions (
      id bigserial primary key,
      transaction_id xid8 not null default pg_current_xact_id(),
      organization_id text not null,
      driver_id text not null,
      lat double precision not null,
      lng double precision not null,
      recorded_at timestamptz not null,
      received_at timestamptz not null,
      accuracy_m real,
      speed_kmh real,
      heading real
    )`.execute(db)
  await sql`create index driver_positions_read_idx on driver_positions (transaction_id, id)`.execute(db)
  await sql`create index driver_positions_driver_idx on driver_positions (driver_id, recorded_at desc)`.execute(db)
  await sql`create index driver_positions_received_idx on driver_positions using brin (received_at)`.execute(db)
  await sql`
    create table eta_journal (
      seq bigserial primary key,
      log_to text not null,
      positions_before text not null,
      tick_at timestamptz,
      recorded_at timestamptz not null default now()
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table eta_journal`.execute(db)
  await sql`drop table driver_positions`.execute(db)
}
