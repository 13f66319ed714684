/**
 * How read-model rows come back from pg (Dates, and numbers as text for bigints; json as text
 * when a column was json rather than jsonb): one reading of each column kind for every module's queries.
 */

/** A timestamp column as an ISO string. */
export const iso = (v: Date | string): string => (v instanceof Date ? v : new Date(v)).toISOString()

/** A nullable timestamp column as an ISO string or null. */
export const isoOrNull = (v: Date | string | null | undefined): string | null => (v == null ? null : iso(v))

/** A bigint or numeric column (pg returns them as text) as a number. */
export const num = (v: unknown): number => Number(v)

/** A nullable bigint or numeric column as a number or null. */
export const numOrNull = (v: unknown): number | null => (v == null ? null : Number(v))

/** A json/jsonb column, parsed when the driver hands it over as text. */
export const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T
