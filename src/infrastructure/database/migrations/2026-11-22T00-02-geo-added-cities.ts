import { type Kysely, sql } from 'kysely'

// Frozen once landed: cities that the offline gazetteer lacks (DESIGN §3.4b). Ids start at
// 10 000 000 so they never collide with the gazetteer's own city ids.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table geo_added_cities (
      id bigint generated always as identity (start with 10000000) primary key,
      country_iso text not null,
      state_code text,
      name text not null,
      normalized_name text not null,
      latitude double precision not null,
      longitude double precision not null,
      created_at timestamptz not null default now()
    )`.execute(db)
  // A null state is one value here, so a city recorded without a state is recorded once.
  await sql`
    create unique index geo_added_cities_key
      on geo_added_cities (country_iso, (coalesce(state_code, '')), normalized_name)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table geo_added_cities`.execute(db)
}
