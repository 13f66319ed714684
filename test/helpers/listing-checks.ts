import type { Kysely } from 'kysely'
import { readModelChecksums } from './read-model-checksums.js'

/**
 * Checks every flat listing's test makes (issue 32): its plans read indexes without sorting the
 * table, and its migration's backfill gives the rows its projection wrote.
 */

/** Scans that are not index scans, or scans of `tables` that a Sort reads without a Limit between. */
export function scanFaults(node: any, tables: readonly string[], sorting = false, out: string[] = []): string[] {
  const type: string = node['Node Type']
  if (type === 'Seq Scan' || type === 'Bitmap Heap Scan') out.push(`${type} on ${node['Relation Name']}`)
  if (sorting && /Scan/.test(type) && tables.includes(node['Relation Name'])) out.push(`Sort over ${type}`)
  const next = type === 'Sort' ? true : type === 'Limit' ? false : sorting
  for (const child of node.Plans ?? []) scanFaults(child, tables, next, out)
  return out
}

/** The top plan node of a query's `explain (format json)` (pg parses the JSON; a text one is parsed here). */
export async function planOf(query: { explain(format: 'json'): Promise<Record<string, any>[]> }): Promise<any> {
  const rows = await query.explain('json')
  const plan = rows[0]!['QUERY PLAN']
  return (typeof plan === 'string' ? JSON.parse(plan) : plan)[0].Plan
}

/** The tables' checksums after the migration is run down and up again (its backfill), beside the ones before. */
export async function backfilledAgain(db: Kysely<any>, migration: { up(db: Kysely<any>): Promise<void>; down(db: Kysely<any>): Promise<void> }, tables: readonly string[]) {
  const projected = await readModelChecksums(db, tables)
  const rm = db.withSchema('read_model')
  await migration.down(rm)
  await migration.up(rm)
  return { projected, backfilled: await readModelChecksums(db, tables) }
}
