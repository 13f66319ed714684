import type { Kysely } from 'kysely'
import type { ReadModelDatabase } from '../../../projections/read-model-database.js'
import { etaOf, type EtaView } from '../../etas/eta-views.js'

/** The current ETA of each task of a route (the snapshot's `tasks[].eta`), from the ETA read model. */
export async function etasOfRoute(rm: Kysely<ReadModelDatabase>, routeId: number): Promise<Map<string, EtaView>> {
  const rows = await rm.selectFrom('task_etas').select(['ulid', 'status', 'eta_at', 'eta_from', 'eta_to', 'eta_basis', 'eta_computed_at', 'eta_window_from', 'eta_window_to', 'eta_late_since'])
    .where('route_id', '=', routeId).where('eta_at', 'is not', null).execute()
  const out = new Map<string, EtaView>()
  for (const r of rows) {
    const eta = etaOf(r.status, r)
    if (eta) out.set(r.ulid, eta)
  }
  return out
}
