import { type Kysely, sql } from 'kysely'

// Frozen once landed. Group commit in set-based statements. es_append_batch (00-05) runs es_append
// once per append, and a subtransaction per atomic group: about 0.2 ms of server time per append,
// most of PostgreSQL's share of a POST /shipments. A plain batch (no 'any' append, distinct streams,
// new event ids, every expected version met) needs no per-append outcome: one statement moves every
// stream version and inserts every event. Anything else is handed to es_append_batch unchanged,
// before any lock is taken, and it answers each append exactly (existing, conflict, aborted).
// Locks: the streams that must exist are taken first, in byte order (collate "C", the order the
// store sorts batches in), and their versions checked again under the lock; only new streams are
// inserted after that, so two batches never take two streams in opposite orders. ('any' upserts
// would be a third lock phase: such batches take es_append_batch's one-by-one order instead.)
// Anything that moved after the check raises: the whole batch rolls back and the store runs its
// groups one by one, as for any batch error.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function es_append_batch_v2(
      p_streams text[], p_stream_types text[], p_modes text[], p_expected bigint[], p_counts int[], p_groups int[],
      p_ids uuid[], p_types text[], p_schema_versions int[], p_data jsonb[], p_metadata jsonb[]
    ) returns table (idx int, outcome text, version bigint, tx text, global_position bigint, existing jsonb)
    language plpgsql as $fn$
    #variable_conflict use_column
    declare
      m int := cardinality(p_streams);
      existing_streams text[];
      plain boolean;
      ks int[];
      vs bigint[];
      gps bigint[];
    begin
      if coalesce(m, 0) = 0 then return; end if;
      select not ('any' = any(p_modes))
         and (select count(distinct u.s) from unnest(p_streams) as u(s)) = m
         and (select count(distinct u.i) from unnest(p_ids) as u(i)) = cardinality(p_ids)
         and not exists (select 1 from es_events e where e.event_id = any(p_ids))
         and not exists (
           select 1 from unnest(p_streams, p_modes, p_expected) as u(s, mode, ex)
           left join es_streams s on s.stream_id = u.s
           where (u.mode = 'no_stream' and s.stream_id is not null)
              or (u.mode = 'stream_exists' and s.stream_id is null)
              or (u.mode = 'exact' and s.version is distinct from u.ex))
        into plain;
      if not plain then
        return query select * from es_append_batch(p_streams, p_stream_types, p_modes, p_expected, p_counts, p_groups,
                                                    p_ids, p_types, p_schema_versions, p_data, p_metadata);
        return;
      end if;

      select coalesce(array_agg(u.s), '{}') into existing_streams
        from unnest(p_streams, p_modes) as u(s, mode) where u.mode in ('exact', 'stream_exists');
      if cardinality(existing_streams) > 0 then
        perform 1 from es_streams s where s.stream_id = any(existing_streams) order by s.stream_id collate "C" for update;
        if exists (
          select 1 from unnest(p_streams, p_modes, p_expected) as u(s, mode, ex)
          left join es_streams s on s.stream_id = u.s
          where (u.mode = 'stream_exists' and s.stream_id is null)
             or (u.mode = 'exact' and s.version is distinct from u.ex)) then
          raise exception using errcode = 'ES002', message = 'es_append_batch_v2: a stream moved after the check';
        end if;
      end if;

      with a as (
        select u.k::int as k, u.s, u.st, u.mode, u.n, (sum(u.n) over (order by u.k) - u.n)::int as off
        from unnest(p_streams, p_stream_types, p_modes, p_counts) with ordinality as u(s, st, mode, n, k)
      ),
      created as (
        insert into es_streams (stream_id, stream_type, version)
        select a.s, a.st, a.n from a where a.mode = 'no_stream' order by a.s collate "C"
        returning es_streams.stream_id, es_streams.version
      ),
      bumped as (
        update es_streams t set version = t.version + a.n, updated_at = now()
        from a where a.mode in ('exact', 'stream_exists') and t.stream_id = a.s
        returning t.stream_id, t.version
      ),
      moved as (
        select a.k, a.s, a.n, a.off, v.version
        from a join (select * from created union all select * from bumped) v on v.stream_id = a.s
      ),
      ins as (
        insert into es_events (stream_id, stream_version, event_id, type, schema_version, data, metadata)
        select mv.s, mv.version - mv.n + e.j, p_ids[mv.off + e.j], p_types[mv.off + e.j], p_schema_versions[mv.off + e.j],
               p_data[mv.off + e.j], p_metadata[mv.off + e.j]
        from moved mv cross join lateral generate_series(1, mv.n) as e(j)
        order by mv.k, e.j
        returning es_events.stream_id, es_events.global_position
      )
      select array_agg(mv.k order by mv.k), array_agg(mv.version order by mv.k), array_agg(g.gp order by mv.k)
        into ks, vs, gps
        from moved mv join (select i.stream_id, max(i.global_position) as gp from ins i group by i.stream_id) g on g.stream_id = mv.s;

      if coalesce(cardinality(ks), 0) <> m then
        raise exception using errcode = 'ES002', message = 'es_append_batch_v2: a stream moved after the check';
      end if;
      return query
        select u.k, 'appended'::text, u.v, pg_current_xact_id()::text, u.gp, null::jsonb
        from unnest(ks, vs, gps) as u(k, v, gp);
    end
    $fn$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists es_append_batch_v2(text[], text[], text[], bigint[], int[], int[], uuid[], text[], int[], jsonb[], jsonb[])`.execute(db)
}
