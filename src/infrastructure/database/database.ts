/**
 * The typed database: one interface per table, as in Kysely's own example. Read-model tables are
 * reached through `readModels(db)` (schema `read_model`); platform tables live in `public`.
 */
export type { ReadModelDatabase } from '../../../projections/read-model-database.js'
import type { PlatformTables } from './platform-tables.js'

export interface Database extends PlatformTables {}
