import { type Kysely, sql } from 'kysely'

// Frozen once landed. Group commit: several appends (of concurrent requests) in one statement and
// one transaction, each with es_append's own rules and its own outcome row. Appends that share a
// group number (consecutive) are one atomic multi-stream append: a conflict on any of them undoes
// the others (a subtransaction, paid only by such groups) and they answer 'aborted'. Groups arrive
// sorted by stream id, so two batches lock their stream rows in one order. A batch that raises (two
// processes creating one stream at once) is rolled back whole; the caller then runs its groups one
// by one.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function es_append_batch(
      p_streams text[], p_stream_types text[], p_modes text[], p_expected bigint[], p_counts int[], p_groups int[],
      p_ids uuid[], p_types text[], p_schema_versions int[], p_data jsonb[], p_metadata jsonb[]
    ) returns table (idx int, outcome text, version bigint, tx text, global_position bigint, existing jsonb)
    language plpgsql as $fn$
    #variable_conflict use_column
    declare
      m int := cardinality(p_streams);
      i int := 1;
      j int;
      k int;
      o int := 0;
      r record;
      outs text[];
      vers bigint[];
      txs text[];
      poss bigint[];
      exs jsonb[];
      failed int;
    begin
      while i <= m loop
        j := i;
        while j < m and p_groups[j + 1] = p_groups[i] loop j := j + 1; end loop;
        if j = i then
          return query
            select i, a.outcome, a.version, a.tx, a.global_position, a.existing
            from es_append(p_streams[i], p_stream_types[i], p_modes[i], p_expected[i],
                           p_ids[o + 1 : o + p_counts[i]], p_types[o + 1 : o + p_counts[i]], p_schema_versions[o + 1 : o + p_counts[i]],
                           p_data[o + 1 : o + p_counts[i]], p_metadata[o + 1 : o + p_counts[i]]) a;
          o := o + p_counts[i];
        else
          failed := null;
          outs := '{}'; vers := '{}'; txs := '{}'; poss := '{}'; exs := '{}';
          begin
            for k in i .. j loop
              select * into r from es_append(p_streams[k], p_stream_types[k], p_modes[k], p_expected[k],
                           p_ids[o + 1 : o + p_counts[k]], p_types[o + 1 : o + p_counts[k]], p_schema_versions[o + 1 : o + p_counts[k]],
                           p_data[o + 1 : o + p_counts[k]], p_metadata[o + 1 : o + p_counts[k]]);
              outs := outs || r.outcome; vers := vers || r.version; txs := txs || r.tx; poss := poss || r.global_position; exs := exs || r.existing;
              o := o + p_counts[k];
              if r.outcome = 'conflict' then
                failed := k;
                raise exception using errcode = 'ES001', message = 'es_append_batch: atomic group conflict';
              end if;
            end loop;
          exception when sqlstate 'ES001' then
            -- the group's appends are undone; variables keep their values
            o := o;
          end;
          if failed is not null then
            o := 0;
            for k in 1 .. j loop o := o + p_counts[k]; end loop;
          end if;
          for k in i .. j loop
            if failed is null then
              return query select k, outs[k - i + 1], vers[k - i + 1], txs[k - i + 1], poss[k - i + 1], exs[k - i + 1];
            elsif k = failed then
              return query select k, 'conflict'::text, vers[k - i + 1], null::text, null::bigint, null::jsonb;
            else
              return query select k, 'aborted'::text, null::bigint, null::text, null::bigint, null::jsonb;
            end if;
          end loop;
        end if;
        i := j + 1;
      end loop;
    end
    $fn$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists es_append_batch(text[], text[], text[], bigint[], int[], int[], uuid[], text[], int[], jsonb[], jsonb[])`.execute(db)
}
