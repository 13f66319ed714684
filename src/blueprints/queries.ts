import type { Selectable, Kysely } from 'kysely'
import type { Blueprint } from '../../schemas/api/blueprints.js'
import type { BlueprintsTable, BlueprintVersionsTable } from '../../projections/blueprints/tables.js'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import type { PageRequest } from '../http/pagination.js'
import { iso, isoOrNull } from '../shared/rows.js'
import { readPage, type ListingKey } from '../http/listing-seek.js'
import { keyAt, seekConditions, summed, type ListingColumns } from '../http/listing-sql.js'

type BlueprintRow = Selectable<BlueprintsTable>
type VersionRow = Selectable<BlueprintVersionsTable>


/** The blueprint as one of its versions shows it (the latest unless another is asked for). */
export const toBlueprint = (b: BlueprintRow, v: VersionRow): Blueprint => ({
  id: b.id, key: b.key, name: v.name, version: v.version, status: v.status, published_version: b.published_version, default: b.is_default,
  steps: v.steps ?? [], start_steps: v.start_steps ?? [],
  created_at: iso(b.created_at), updated_at: iso(b.updated_at), published_at: isoOrNull(v.published_at),
})

/** A blueprint of the organization by id or by key, or undefined. */
export const findBlueprint = (db: Kysely<ReadModelDatabase>, orgId: string, idOrKey: string | number) => {
  const q = db.selectFrom('blueprints').selectAll().where('organization_id', '=', orgId)
  const id = typeof idOrKey === 'number' ? idOrKey : /^\d{1,15}$/.test(idOrKey) ? Number(idOrKey) : null
  return (id !== null ? q.where('id', '=', id) : q.where('key', '=', String(idOrKey))).executeTakeFirst()
}

export const findVersion = (db: Kysely<ReadModelDatabase>, blueprintId: number, version: number) =>
  db.selectFrom('blueprint_versions').selectAll().where('blueprint_id', '=', blueprintId).where('version', '=', version).executeTakeFirst()

/** The blueprint with its latest version (or `version`), or undefined. */
export async function readBlueprint(db: Kysely<ReadModelDatabase>, orgId: string, idOrKey: string | number, version?: number): Promise<Blueprint | undefined> {
  const b = await findBlueprint(db, orgId, idOrKey)
  if (!b) return undefined
  const v = await findVersion(db, b.id, version ?? b.version)
  return v ? toBlueprint(b, v) : undefined
}

type BlueprintFilters = { status?: BlueprintRow['status'] | undefined; key?: string | undefined }

/** The total under the filters: blueprint_listing_counts, or with `key` (unique in the organization) a count through its unique index. */
async function blueprintsTotal(db: Kysely<ReadModelDatabase>, orgId: string, f: BlueprintFilters): Promise<number> {
  if (f.key) {
    let q = db.selectFrom('blueprints').select((eb) => eb.fn.countAll<string>().as('n')).where('organization_id', '=', orgId).where('key', '=', f.key)
    if (f.status) q = q.where('status', '=', f.status)
    return summed(await q.execute())
  }
  let q = db.selectFrom('blueprint_listing_counts').select('n').where('organization_id', '=', orgId)
  if (f.status) q = q.where('status', '=', f.status)
  return summed(await q.execute())
}

const KEY: ListingColumns = { at: 'b.created_at', atKind: 'instant', id: 'b.id', idType: 'bigint', order: 'asc' }

/** The organization's blueprints (latest versions) oldest first, a page through the index of its filter (issue 32). */
export async function listBlueprints(db: Kysely<ReadModelDatabase>, orgId: string, f: BlueprintFilters, page: PageRequest, after?: ListingKey) {
  const { shown, ...listed } = await readPage({ days: undefined, countTotal: () => blueprintsTotal(db, orgId, f), order: 'asc', page, after, read: async (seek, limit) => {
    let q = db.selectFrom('blueprints as b').innerJoin('blueprint_versions as v', (j) => j.onRef('v.blueprint_id', '=', 'b.id').onRef('v.version', '=', 'b.version'))
      .selectAll('b').select(['v.name as v_name', 'v.steps as v_steps', 'v.start_steps as v_start_steps', 'v.status as v_status', 'v.published_at as v_published_at'])
      .select(keyAt(KEY).as('at'))
      .where('b.organization_id', '=', orgId)
    if (f.status) q = q.where('b.status', '=', f.status)
    if (f.key) q = q.where('b.key', '=', f.key)
    for (const c of seekConditions(KEY, seek)) q = q.where(c)
    const rows = await q.orderBy('b.created_at').orderBy('b.id').offset(seek.skip).limit(limit).execute()
    return rows.map((r) => ({
      row: toBlueprint(r, {
        blueprint_id: r.id, organization_id: r.organization_id, version: r.version, name: r.v_name, steps: r.v_steps, start_steps: r.v_start_steps,
        status: r.v_status, drafted_at: r.updated_at, published_at: r.v_published_at,
      }),
      key: { at: r.at, id: r.id },
    }))
  } })
  return { rows: shown.map((r) => r.row), ...listed }
}

/** The organization's blueprint keys (for `start_workflow` checks), and whether `key` is taken. */
export async function blueprintKeys(db: Kysely<ReadModelDatabase>, orgId: string): Promise<Set<string>> {
  const rows = await db.selectFrom('blueprints').select('key').where('organization_id', '=', orgId).execute()
  return new Set(rows.map((r) => r.key))
}
