import { sql } from 'kysely'
import type { Platform } from '../platform.js'

/** `n` new service type ids from `service_type_id_seq`: drawn by a slice's handler before deciding (create, add a service type). */
export const nextServiceTypeIds = async (platform: Platform, n: number): Promise<number[]> => {
  if (n === 0) return []
  const r = await sql<{ id: number }>`select nextval('service_type_id_seq')::int as id from generate_series(1, ${n})`.execute(platform.db)
  return r.rows.map((x) => Number(x.id))
}
