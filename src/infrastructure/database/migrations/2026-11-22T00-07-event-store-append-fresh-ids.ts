import { type Kysely, sql } from 'kysely'

// Frozen once landed. es_append (00-04) first looks for every event id in the log, so that an
// append repeated with the same ids appends nothing. Ids the store drew itself (random UUIDs, the
// caller sent none) cannot be in the log: that look was a third of a lone append's server time.
// es_append_v2 skips it for such appends and is es_append otherwise; the unique index on event_id
// still refuses a duplicate either way.
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
    begin
      if p_check_ids then
        return query select * from es_append(p_stream, p_stream_type, p_mode, p_expected, p_ids, p_types, p_schema_versions, p_data, p_metadata);
        return;
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
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists es_append_v2(text, text, text, bigint, uuid[], text[], int[], jsonb[], jsonb[], boolean)`.execute(db)
}
