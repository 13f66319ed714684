import { parseArgs } from 'node:util'
import { resolve } from 'node:path'
import { loadConfig } from '../config.js'
import { openConfiguredDatabase } from '../infrastructure/database/configured-database.js'
import { migrateInfrastructure, migrateReadModels } from '../infrastructure/database/migrate.js'
import { carryOverPglite, CarryOverRefused } from './carry-over/pglite-carry-over.js'

export const CARRY_OVER_USAGE = `carry-over-pglite [--from <dir>]
            copy an old embedded PGlite database (default \${DATA_DIR}/pglite) into the configured
            database: its event log and every other platform table, then rebuild the read models
            from the log, verify both, and move the old folder aside to <dir>.carried-over`

/**
 * `npm run carry-over-pglite`: what the platform does at its start when it finds the old folder,
 * done on demand (and with its refusals said out loud). The server must be stopped: PGlite is one
 * process at a time, and a running platform may already be writing events.
 */
export async function carryOverPgliteCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { from: { type: 'string' } } })
  const config = loadConfig()
  const pgliteDir = resolve(values.from ?? `${config.dataDir}/pglite`)
  if (config.eventStoreUrl) throw new CarryOverRefused('EVENTSTORE_URL is set: the log lives in EventStoreDB, and an old PGlite log is carried into a PostgreSQL one only')
  // DATABASE_URL's server, or the embedded one in DATA_DIR (a running platform's, or one started for this run).
  const { database } = await openConfiguredDatabase(config, { role: 'carry-over-pglite' })
  try {
    await migrateInfrastructure(database.db)
    await migrateReadModels(database.db)
    const r = await carryOverPglite({
      pgliteDir,
      target: database,
      progress: true,
      log: (line) => process.stdout.write(`${line}\n`),
      etas: { speedKmh: config.routingSpeedKmh, delayThresholdMs: config.delayThresholdMinutes * 60_000 },
    })
    process.stdout.write(`carried over ${r.events} events (${r.rows} rows) in ${(r.copySeconds + r.rebuildSeconds + r.verifySeconds).toFixed(2)} s `
      + `(copy ${r.copySeconds.toFixed(2)} s, rebuild ${r.rebuildSeconds.toFixed(2)} s, verification ${r.verifySeconds.toFixed(2)} s; ${Math.round(r.eventsPerSecond)} events/s)\n`)
  } finally {
    await database.close()
  }
}
