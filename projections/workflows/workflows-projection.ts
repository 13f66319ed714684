import { sql } from 'kysely'
import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { WorkflowEvents } from '../../schemas/events/workflows.js'
import { defineProjection, type Projection, type RecordedOf } from '../projection.js'
import { writesOnly } from '../recorded-writes.js'
import { idOf } from '../../schemas/events/streams.js'
import { addCounts, dropZeroCounts } from '../listing-counts.js'

/** Only `workflow-<id>` streams: `workflow-start-…` reservations share the category. */
const workflowIdOf = (e: RecordedEvent): number | null => idOf.workflow(e.streamId)

/** A final event's status and the timestamp column it fills. */
function finalOf(e: RecordedOf<Pick<typeof WorkflowEvents, 'WorkflowCompleted' | 'WorkflowFailed' | 'WorkflowCancelled'>>) {
  switch (e.type) {
    case 'WorkflowCompleted': return { status: 'completed' as const, column: 'completed_at' as const, when: e.data.completed_at }
    case 'WorkflowFailed': return { status: 'failed' as const, column: 'failed_at' as const, when: e.data.failed_at }
    default: return { status: 'cancelled' as const, column: 'cancelled_at' as const, when: e.data.cancelled_at }
  }
}

/**
 * workflows: status and timestamps. Status moves only forward from an open state, so a replayed or
 * late event never reopens a final workflow; an event for an unknown row is skipped (never thrown).
 */
export const workflowsProjection: Projection = writesOnly(defineProjection({
  name: 'workflows',
  events: WorkflowEvents,
  async apply(db, events, ctx) {
    // The counts of the workflows this batch writes: their keys as found, and as left (listing-counts.ts).
    const ids = [...new Set(events.map(workflowIdOf).filter((id): id is number => id !== null))]
    const keys = workflowCountKeys(ctx.schema, ids)
    if (ids.length) await addCounts(ctx.schema, 'workflow_listing_counts', WORKFLOW_COUNT_KEYS, keys, -1).execute(db)
    for (const e of events) {
      const id = workflowIdOf(e)
      if (id === null) continue
      const open = ['new', 'scheduled', 'in_progress'] as const
      const at = e.metadata?.occurred_at ?? e.recordedAt.toISOString()
      switch (e.type) {
        case 'WorkflowCreated': {
          const d = e.data
          await db.insertInto('workflows').values({
            id, organization_id: d.organization_id, status: 'new', blueprint_id: d.blueprint.id, blueprint_key: d.blueprint.key,
            blueprint_version: d.blueprint.version, data: JSON.stringify(d.data), shipment_id: d.shipment_id, errors: '[]',
            created_at: d.created_at, updated_at: d.created_at, completed_at: null, failed_at: null, cancelled_at: null,
          }).onConflict((oc) => oc.column('id').doNothing()).execute()
          break
        }
        case 'WorkflowScheduled': {
          const d = e.data
          await db.updateTable('workflows').set({ status: 'scheduled', updated_at: d.scheduled_at }).where('id', '=', id).where('status', '=', 'new').execute()
          break
        }
        case 'WorkflowProgressed': {
          const d = e.data
          await db.updateTable('workflows').set({ status: 'in_progress', updated_at: d.started_at }).where('id', '=', id).where('status', 'in', ['new', 'scheduled']).execute()
          break
        }
        case 'WorkflowCompleted':
        case 'WorkflowFailed':
        case 'WorkflowCancelled': {
          const { status, column, when } = finalOf(e)
          await db.updateTable('workflows').set({ status, [column]: when, updated_at: when }).where('id', '=', id).where('status', 'in', open).execute()
          break
        }
        case 'WorkflowActionParked': {
          const d = e.data
          const item = JSON.stringify([{ action_key: d.action_key, error: d.error, at: d.at }])
          await db.updateTable('workflows').set({ errors: sql`errors || ${item}::jsonb`, updated_at: d.at }).where('id', '=', id).execute()
          break
        }
        default:
          // A task made or an action taken: the workflow changed (its tasks are read from `tasks`).
          await db.updateTable('workflows').set({ updated_at: at }).where('id', '=', id).execute()
          break
      }
    }
    if (ids.length) {
      await addCounts(ctx.schema, 'workflow_listing_counts', WORKFLOW_COUNT_KEYS, keys, 1).execute(db)
      await dropZeroCounts(ctx.schema, 'workflow_listing_counts').execute(db)
    }
  },
}))

const WORKFLOW_COUNT_KEYS = ['org_id', 'blueprint_key', 'status', 'day'] as const

/** Each workflow's count keys: its organization's '' scope and its blueprint's. */
const workflowCountKeys = (schema: string, ids: number[]) =>
  sql`select w.organization_id as org_id, b.blueprint_key, w.status, (w.created_at at time zone 'UTC')::date as day
    from ${sql.id(schema, 'workflows')} w cross join lateral (values (''), (w.blueprint_key)) b(blueprint_key)
    where w.id = any(${ids}::bigint[])`
