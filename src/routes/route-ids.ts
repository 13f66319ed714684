import { sql } from 'kysely'
import type { Platform } from '../platform.js'

/**
 * A new route id from `route_id_seq` (the sequence of the operations migration): drawn by the
 * slice's handler before deciding (create, plan), never inside the aggregate.
 */
export async function nextRouteId(platform: Platform): Promise<number> {
  const r = await sql<{ id: number }>`select nextval('route_id_seq')::int as id`.execute(platform.db)
  return Number(r.rows[0]!.id)
}

