import { type Kysely, sql } from 'kysely'

// Frozen once landed. A driver's positions as `GET /users/{id}/positions` reads them (issue 32):
// (driver_id, recorded_at, id) gives a range in the listing's order, ties by id included, so a page
// is a seek that stops at its limit with no sort; it replaces (driver_id, recorded_at desc), whose
// work (a driver's newest position) it does read backward. One index, not two, on the table every
// report writes to. Built in the migration's transaction: writes to the table wait while it builds.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index driver_positions_driver_seek_idx on driver_positions (driver_id, recorded_at, id)`.execute(db)
  await sql`drop index driver_positions_driver_idx`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index driver_positions_driver_idx on driver_positions (driver_id, recorded_at desc)`.execute(db)
  await sql`drop index driver_positions_driver_seek_idx`.execute(db)
}
