import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { BlueprintEvents } from '../../schemas/events/blueprints.js'
import { defineProjection, type Projection } from '../projection.js'
import { idOf } from '../../schemas/events/streams.js'

const blueprintIdOf = (e: RecordedEvent) => idOf.blueprint(e.streamId)!

/** blueprints (one row each) and blueprint_versions (a row per version; published rows frozen). */
export const blueprintsProjection: Projection = defineProjection({
  name: 'blueprints',
  events: BlueprintEvents,
  async apply(db, events) {
    for (const e of events) {
      const id = blueprintIdOf(e)
      switch (e.type) {
        case 'BlueprintCreated': {
          const d = e.data
          await db.insertInto('blueprints').values({
            id, organization_id: d.organization_id, key: d.key, is_default: d.default, version: d.version, status: 'draft',
            published_version: null, created_at: d.created_at, updated_at: d.created_at,
          }).onConflict((oc) => oc.column('id').doNothing()).execute()
          await db.insertInto('blueprint_versions').values({
            blueprint_id: id, organization_id: d.organization_id, version: d.version, name: d.name, steps: JSON.stringify(d.steps),
            start_steps: JSON.stringify(d.start_steps), status: 'draft', drafted_at: d.created_at, published_at: null,
          }).onConflict((oc) => oc.columns(['blueprint_id', 'version']).doNothing()).execute()
          break
        }
        case 'BlueprintDrafted': {
          const d = e.data
          const b = await db.updateTable('blueprints').set({ version: d.version, status: 'draft', updated_at: d.drafted_at })
            .where('id', '=', id).returning('organization_id').executeTakeFirst()
          if (!b) break
          const content = { name: d.name, steps: JSON.stringify(d.steps), start_steps: JSON.stringify(d.start_steps), drafted_at: d.drafted_at }
          await db.insertInto('blueprint_versions').values({ blueprint_id: id, organization_id: b.organization_id, version: d.version, status: 'draft', published_at: null, ...content })
            .onConflict((oc) => oc.columns(['blueprint_id', 'version']).doUpdateSet(content).where('blueprint_versions.status', '=', 'draft')).execute()
          break
        }
        case 'BlueprintPublished': {
          const d = e.data
          await db.updateTable('blueprint_versions').set({ status: 'published', published_at: d.published_at })
            .where('blueprint_id', '=', id).where('version', '=', d.version).execute()
          await db.updateTable('blueprints').set({ status: 'published', published_version: d.version, updated_at: d.published_at })
            .where('id', '=', id).where('version', '=', d.version).execute()
          break
        }
        default:
          break
      }
    }
  },
})
