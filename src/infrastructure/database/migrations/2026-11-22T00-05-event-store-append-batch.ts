import { type Kysely, sql } from 'kysely'

// Frozen once landed. Group commit: several appends (of concurrent requests) in one statement and
// one transaction, each with es_append's own rules and its own outcome row. Appends arrive sorted
// by stream id, so two batches lock their stream rows in one order and cannot deadlock. A batch
// that raises (two processes creating one stream at once) is rolled back whole; the caller then
// runs its appends one by one.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function es_append_batch(
      p_streams text[], p_stream_types text[], p_modes text[], p_expected bigint[], p_counts int[],
      p_ids uuid[], p_types text[], p_schema_versions int[], p_data jsonb[], p_metadata jsonb[]
    ) returns table (idx int, outcome text, version bigint, tx text, global_position bigint, existing jsonb)
    language plpgsql as $fn$
    #variable_conflict use_column
    declare
      i int;
      o int := 0;
      n int;
    begin
      for i in 1 .. cardinality(p_streams) loop
        n := p_counts[i];
        return query
          select i, a.outcome, a.version, a.tx, a.global_position, a.existing
          from es_append(p_streams[i], p_stream_types[i], p_modes[i], p_expected[i],
                         p_ids[o + 1 : o + n], p_types[o + 1 : o + n], p_schema_versions[o + 1 : o + n],
                         p_data[o + 1 : o + n], p_metadata[o + 1 : o + n]) a;
        o := o + n;
      end loop;
    end
    $fn$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists es_append_batch(text[], text[], text[], bigint[], int[], uuid[], text[], int[], jsonb[], jsonb[])`.execute(db)
}
