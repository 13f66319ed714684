import { sql, type OperationNodeSource, type RawBuilder } from 'kysely'

/**
 * task_listing_counts and task_shift_days (issue 32), kept as tasks are created and change status.
 * The counts move in SQL from the row as the batch found it, so the projection needs no read of its
 * own; every statement is keyed by the tasks it touches, and a count at zero is deleted, so the
 * rows do not depend on how the log was cut into batches (a rebuild gives the same rows).
 */

/** The UTC days ('YYYY-MM-DD') a task's time windows touch: each window [from, to) from from's day to the one holding its last instant. */
export function shiftDaysOf(windows: readonly { from: string; to: string }[]): string[] {
  const days = new Set<string>()
  for (const w of windows) {
    const to = Date.parse(w.to)
    const first = Date.parse(`${new Date(w.from).toISOString().slice(0, 10)}T00:00:00Z`)
    for (let d = first; d < to; d += 86_400_000) days.add(new Date(d).toISOString().slice(0, 10))
  }
  return [...days]
}

/** Every task counts in its organization's '' row, and an assigned one in its assignee's row too. */
const SCOPES = (row: string) => sql.raw(`(select '' as assignee_id union all select ${row}.assignee_id where ${row}.assignee_id is not null)`)
const DAY = (row: string) => sql.raw(`(${row}.created_at at time zone 'UTC')::date`)

/** Inserts the tasks (the insert `returning` the listed columns) and counts the ones it did insert. */
export function insertCounted(schema: string, insert: OperationNodeSource): RawBuilder<unknown> {
  const counts = sql.id(schema, 'task_listing_counts')
  return sql`with i as (${insert})
    insert into ${counts} as c (org_id, assignee_id, status, type, day, n)
    select i.organization_id, a.assignee_id, i.status, i.type, ${DAY('i')}, count(*)
    from i cross join lateral ${SCOPES('i')} a
    group by 1, 2, 3, 4, 5
    on conflict (org_id, assignee_id, status, type, day) do update set n = c.n + excluded.n`
}

/** Moves each task's counts from the status its row has to the new one (run before the row's update). */
export function moveCounts(schema: string, moves: readonly { ulid: string; status: string }[]): RawBuilder<unknown> {
  const counts = sql.id(schema, 'task_listing_counts')
  return sql`insert into ${counts} as c (org_id, assignee_id, status, type, day, n)
    select t.organization_id, a.assignee_id, s.status, t.type, ${DAY('t')}, sum(s.n)
    from json_to_recordset(${JSON.stringify(moves)}::json) as m(ulid text, status text)
    join ${sql.id(schema, 'tasks')} t on t.ulid = m.ulid and t.status <> m.status
    cross join lateral ${SCOPES('t')} a
    cross join lateral (values (t.status, -1), (m.status, 1)) s(status, n)
    group by 1, 2, 3, 4, 5
    on conflict (org_id, assignee_id, status, type, day) do update set n = c.n + excluded.n`
}

/** Deletes the counts at zero among these tasks' keys. */
export function dropZeroCounts(schema: string, ulids: readonly string[]): RawBuilder<unknown> {
  return sql`delete from ${sql.id(schema, 'task_listing_counts')} c using ${sql.id(schema, 'tasks')} t
    where t.ulid = any(${[...ulids]}::text[]) and c.n = 0 and c.org_id = t.organization_id and c.type = t.type
      and c.day = ${DAY('t')} and c.assignee_id in ('', coalesce(t.assignee_id, ''))`
}
