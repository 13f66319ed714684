import type { Platform } from '../platform.js'
import { prunePositions } from './positions-table.js'

const EVERY_MS = 3600_000

/**
 * Prunes positions past POSITION_RETENTION_DAYS (DESIGN §3.10) once at start and then hourly.
 * Every process may run it: a delete of what another already deleted deletes nothing.
 */
export function startPositionPruning(platform: Platform, logger: { warn(obj: object, msg: string): void }): () => void {
  const run = () => {
    const before = new Date(platform.clock().getTime() - platform.config.positionRetentionDays * 86_400_000)
    prunePositions(platform.db, before).catch((err) => logger.warn({ err }, 'pruning drivers\' positions failed'))
  }
  run()
  const timer = setInterval(run, EVERY_MS)
  timer.unref()
  return () => clearInterval(timer)
}
