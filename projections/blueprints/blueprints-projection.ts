import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { BlueprintEvents } from '../../schemas/events/blueprints.js'
import { defineProjection, type Projection } from '../projection.js'
import { idOf } from '../../schemas/events/streams.js'
import type { ReadModelDatabase } from '../read-model-database.js'
import { sql, type Kysely } from 'kysely'
import { CountDeltas } from '../listing-counts.js'

/** A blueprint's row as the listing counts it, before an event changes it. */
const listedBlueprint = (db: Kysely<ReadModelDatabase>, id: number) =>
  db.selectFrom('blueprints').select(['organization_id', 'status']).where('id', '=', id).executeTakeFirst()

const blueprintIdOf = (e: RecordedEvent) => idOf.blueprint(e.streamId)!

/**
 * blueprints (one row each) and blueprint_versions (a row per version; published rows frozen);
 * blueprint_listing_counts follows each blueprint's status, its before and after summed per batch.
 */
export const blueprintsProjection: Projection = defineProjection({
  name: 'blueprints',
  events: BlueprintEvents,
  async apply(db, events) {
    const counts = new CountDeltas(['organization_id', 'status'] as const)
    for (const e of events) {
      const id = blueprintIdOf(e)
      switch (e.type) {
        case 'BlueprintCreated': {
          const d = e.data
          const created = await db.insertInto('blueprints').values({
            id, organization_id: d.organization_id, key: d.key, is_default: d.default, version: d.version, status: 'draft',
            published_version: null, created_at: d.created_at, updated_at: d.created_at,
          }).onConflict((oc) => oc.column('id').doNothing()).returning(['organization_id', 'status']).executeTakeFirst()
          counts.moved(undefined, created)
          await db.insertInto('blueprint_versions').values({
            blueprint_id: id, organization_id: d.organization_id, version: d.version, name: d.name, steps: JSON.stringify(d.steps),
            start_steps: JSON.stringify(d.start_steps), status: 'draft', drafted_at: d.created_at, published_at: null,
          }).onConflict((oc) => oc.columns(['blueprint_id', 'version']).doNothing()).execute()
          break
        }
        case 'BlueprintDrafted': {
          const d = e.data
          const before = await listedBlueprint(db, id)
          const b = await db.updateTable('blueprints').set({ version: d.version, status: 'draft', updated_at: d.drafted_at })
            .where('id', '=', id).returning(['organization_id', 'status']).executeTakeFirst()
          if (!b) break
          counts.moved(before, b)
          const content = { name: d.name, steps: JSON.stringify(d.steps), start_steps: JSON.stringify(d.start_steps), drafted_at: d.drafted_at }
          await db.insertInto('blueprint_versions').values({ blueprint_id: id, organization_id: b.organization_id, version: d.version, status: 'draft', published_at: null, ...content })
            .onConflict((oc) => oc.columns(['blueprint_id', 'version']).doUpdateSet(content).where('blueprint_versions.status', '=', 'draft')).execute()
          break
        }
        case 'BlueprintPublished': {
          const d = e.data
          await db.updateTable('blueprint_versions').set({ status: 'published', published_at: d.published_at })
            .where('blueprint_id', '=', id).where('version', '=', d.version).execute()
          const before = await listedBlueprint(db, id)
          const after = await db.updateTable('blueprints').set({ status: 'published', published_version: d.version, updated_at: d.published_at })
            .where('id', '=', id).where('version', '=', d.version).returning(['organization_id', 'status']).executeTakeFirst()
          if (after) counts.moved(before, after)
          break
        }
        default:
          break
      }
    }
    const deltas = counts.rows()
    if (deltas.length) {
      await db.insertInto('blueprint_listing_counts').values(deltas)
        .onConflict((oc) => oc.columns(['organization_id', 'status']).doUpdateSet({ n: sql`blueprint_listing_counts.n + excluded.n` })).execute()
      // No row at zero: a rebuild, batched otherwise, gives the same rows.
      await db.deleteFrom('blueprint_listing_counts').where('organization_id', 'in', deltas.map((d) => d.organization_id)).where('n', '=', '0').execute()
    }
  },
})
