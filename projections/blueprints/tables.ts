import type { ColumnType } from 'kysely'
import type { Step } from '../../schemas/api/blueprints.js'

type Ts = ColumnType<Date, Date | string, Date | string>
type TsNull = ColumnType<Date | null, Date | string | null, Date | string | null>
type Json<T> = ColumnType<T | null, string | null, string | null>

/** One row per blueprint: its key and where its versions stand. */
export interface BlueprintsTable {
  id: number
  organization_id: string
  key: string
  /** One of the two every organization starts with (`delivery`, `pickup-delivery`). */
  is_default: boolean
  /** The latest version, and its status. */
  version: number
  status: 'draft' | 'published'
  /** The version new workflows start with (the latest published), or null before the first publication. */
  published_version: number | null
  created_at: Ts
  updated_at: Ts
}

/** Every version of every blueprint; a published row never changes again. */
export interface BlueprintVersionsTable {
  blueprint_id: number
  organization_id: string
  version: number
  name: string
  steps: Json<Step[]>
  start_steps: Json<string[]>
  status: 'draft' | 'published'
  drafted_at: Ts
  published_at: TsNull
}

/** An organization's blueprints per status: the listing's `meta.total` under each filter (issue 32). */
export interface BlueprintListingCountsTable {
  organization_id: string
  status: string
  n: ColumnType<string, number | string, number | string>
}

export interface BlueprintsTables {
  blueprint_listing_counts: BlueprintListingCountsTable
  blueprints: BlueprintsTable
  blueprint_versions: BlueprintVersionsTable
}
