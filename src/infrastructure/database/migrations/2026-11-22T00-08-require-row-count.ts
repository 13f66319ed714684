import { type Kysely, sql } from 'kysely'

// Frozen once landed. Some writers send a whole transaction as one string of statements, one round
// trip (src/infrastructure/database/inline-statements.ts): the projector's round, an idempotent
// consumer's batch. Their guard (every checkpoint moved, every message id newly marked) cannot
// return to the client between statements, so it raises instead, which rolls the string back.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function require_row_count(p_got bigint, p_want int, p_what text) returns int
    language plpgsql as $fn$
    begin
      if p_got <> p_want then
        raise exception '%: % of % rows', p_what, p_got, p_want using errcode = 'RC001';
      end if;
      return p_want;
    end $fn$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists require_row_count(bigint, int, text)`.execute(db)
}
