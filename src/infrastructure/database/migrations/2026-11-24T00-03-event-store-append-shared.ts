import { type Kysely, sql } from 'kysely'
import { up as appendUp } from './2026-11-22T00-04-event-store-append.js'
import { up as batchUp } from './2026-11-22T00-05-event-store-append-batch.js'
import { up as freshIdsUp } from './2026-11-22T00-07-event-store-append-fresh-ids.js'

// Frozen once landed. es_append (00-04) and es_append_v2 (00-07) carried the same version move and
// insert, copied. es_append_v2 now holds the one append body, its look for repeated ids behind
// p_check_ids; es_append is es_append_v2 with the look on, kept for callers of older releases.
// The body is in es_append_v2, not in a third function both call, because every nested plpgsql
// call is paid per append: the store's lone append goes straight to es_append_v2 as before (an
// explicit-id one now runs one call fewer), and es_append_batch (00-05, restated here word for
// word but for its two calls) calls es_append_v2 directly instead of through es_append.
// Outcomes, versions, positions and errors are those of 00-04, 00-05 and 00-07.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function es_append_v2(
      p_stream text, p_stream_type text, p_mode text, p_expected bigint,
      p_ids uuid[], p_types text[], p_schema_versions int[], p_data jsonb[], p_metadata jsonb[], p_check_ids boolean
    ) returns table (outcome text, version bigint, tx text, global_position bigint, existing jsonb)
    language plpgsql as $fn$
    #variable_conflict use_column
    declare
      n int := cardinality(p_ids);
      v bigint;
      found_ids jsonb;
    begin
      -- Ids the store drew cannot be in the log; any other id already stored appends nothing.
      if p_check_ids then
        select jsonb_agg(jsonb_build_object('stream_id', e.stream_id, 'stream_version', e.stream_version,
                 'tx', e.transaction_id::text, 'global_position', e.global_position) order by e.transaction_id, e.global_position)
          into found_ids from es_events e where e.event_id = any(p_ids);
        if found_ids is not null then
          return query select 'existing'::text, null::bigint, null::text, null::bigint, found_ids;
          return;
        end if;
      end if;
      if p_mode = 'no_stream' then
        insert into es_streams (stream_id, stream_type, version) values (p_stream, p_stream_type, n)
          returning es_streams.version into v;
      elsif p_mode = 'any' then
        insert into es_streams (stream_id, stream_type, version) values (p_stream, p_stream_type, n)
          on conflict (stream_id) do update set version = es_streams.version + n, updated_at = now()
          returning es_streams.version into v;
      elsif p_mode = 'stream_exists' then
        update es_streams set version = es_streams.version + n, updated_at = now()
          where stream_id = p_stream returning es_streams.version into v;
      else
        update es_streams set version = es_streams.version + n, updated_at = now()
          where stream_id = p_stream and es_streams.version = p_expected returning es_streams.version into v;
      end if;
      if v is null then
        return query select 'conflict'::text, (select s.version from es_streams s where s.stream_id = p_stream), null::text, null::bigint, null::jsonb;
        return;
      end if;
      return query
        with ins as (
          insert into es_events (stream_id, stream_version, event_id, type, schema_version, data, metadata)
          select p_stream, v - n + u.ord, u.id, u.t, u.sv, u.d, u.m
          from unnest(p_ids, p_types, p_schema_versions, p_data, p_metadata) with ordinality as u(id, t, sv, d, m, ord)
          order by u.ord
          returning es_events.transaction_id, es_events.global_position
        )
        select 'appended'::text, v, (select i.transaction_id::text from ins i order by i.global_position desc limit 1),
               (select max(i.global_position) from ins i), null::jsonb;
    end
    $fn$`.execute(db)

  await sql`
    create or replace function es_append(
      p_stream text, p_stream_type text, p_mode text, p_expected bigint,
      p_ids uuid[], p_types text[], p_schema_versions int[], p_data jsonb[], p_metadata jsonb[]
    ) returns table (outcome text, version bigint, tx text, global_position bigint, existing jsonb)
    language plpgsql as $fn$
    begin
      return query select * from es_append_v2(p_stream, p_stream_type, p_mode, p_expected,
                                              p_ids, p_types, p_schema_versions, p_data, p_metadata, true);
    end
    $fn$`.execute(db)

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
            from es_append_v2(p_streams[i], p_stream_types[i], p_modes[i], p_expected[i],
                           p_ids[o + 1 : o + p_counts[i]], p_types[o + 1 : o + p_counts[i]], p_schema_versions[o + 1 : o + p_counts[i]],
                           p_data[o + 1 : o + p_counts[i]], p_metadata[o + 1 : o + p_counts[i]], true) a;
          o := o + p_counts[i];
        else
          failed := null;
          outs := '{}'; vers := '{}'; txs := '{}'; poss := '{}'; exs := '{}';
          begin
            for k in i .. j loop
              select * into r from es_append_v2(p_streams[k], p_stream_types[k], p_modes[k], p_expected[k],
                           p_ids[o + 1 : o + p_counts[k]], p_types[o + 1 : o + p_counts[k]], p_schema_versions[o + 1 : o + p_counts[k]],
                           p_data[o + 1 : o + p_counts[k]], p_metadata[o + 1 : o + p_counts[k]], true);
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

// Back to the functions as 00-04, 00-05 and 00-07 created them (their own up: create or replace).
export async function down(db: Kysely<any>): Promise<void> {
  await appendUp(db)
  await batchUp(db)
  await freshIdsUp(db)
}
