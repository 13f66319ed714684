import { sql } from 'kysely'
import t from 'tap'
import { recordedWrites } from '../../projections/recorded-writes.js'
import type { Projection } from '../../projections/projection.js'

t.test('a write-only projection\'s apply becomes its statements, in the round\'s schema, untouched', async (t) => {
  const changed: string[] = []
  const apply: Projection['apply'] = async (db, events, ctx) => {
    ctx.changed('things', events.map((e) => e.id))
    for (const e of events) await db.updateTable('workflows').set({ updated_at: e.recordedAt.toISOString() }).where('id', '=', Number(e.id)).execute()
    await sql`update ${sql.id(ctx.schema, 'workflows')} set errors = '[]'`.execute(db)
  }
  const event = (id: string) => ({ id, streamId: `workflow-${id}`, streamVersion: 1, position: '1/1', type: 'WorkflowCreated', data: {}, metadata: { actor: { kind: 'system' as const, id: 't' }, occurred_at: '' }, schemaVersion: 1, recordedAt: new Date(0) })
  const statements = await recordedWrites(apply)(undefined as never, [event('7'), event('8')], { schema: 'read_model_rebuild', changed: (_topic, keys) => changed.push(...[...keys].map(String)) })
  t.same(statements.map((q) => q.sql), [
    'update "read_model_rebuild"."workflows" set "updated_at" = $1 where "id" = $2',
    'update "read_model_rebuild"."workflows" set "updated_at" = $1 where "id" = $2',
    'update "read_model_rebuild"."workflows" set errors = \'[]\'',
  ])
  t.same(statements[1]!.parameters, ['1970-01-01T00:00:00.000Z', 8])
  t.same(changed, ['7', '8'], 'its change notices reach the round')
})
