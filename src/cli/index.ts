/**
 * Command line: `node --import tsx src/cli/index.ts <command>`. Configured from the environment
 * like the server (DATABASE_URL, EVENTSTORE_URL, DATA_DIR). With the embedded PGlite, stop the
 * server first: PGlite is one process at a time.
 */
import { loadConfig } from '../config.js'
import { openDatabase } from '../infrastructure/database/connection.js'
import { migrateInfrastructure, migrateReadModels } from '../infrastructure/database/migrate.js'
import { createEventStore } from '../infrastructure/event-store/create-event-store.js'
import { rebuildReadModels } from './rebuild.js'

const usage = `usage: cli <command>

commands:
  rebuild   replay the whole event log into fresh read-model tables and swap them in
`

async function rebuild(): Promise<void> {
  const config = loadConfig()
  const database = await openDatabase(config.databaseUrl ? { url: config.databaseUrl } : { pgliteDir: `${config.dataDir}/pglite` })
  try {
    await migrateInfrastructure(database.db)
    await migrateReadModels(database.db)
    const store = await createEventStore(config, database)
    try {
      const r = await rebuildReadModels({ database, store, progress: true })
      process.stdout.write(`rebuilt read models from ${r.events} events in ${r.seconds.toFixed(2)} s `
        + `(${Math.round(r.eventsPerSecond)} events/s); ${r.tailEvents} more applied during the swap\n`)
    } finally {
      await store.close()
    }
  } finally {
    await database.close()
  }
}

const commands: Record<string, () => Promise<void>> = { rebuild }

const name = process.argv[2]
const command = name ? commands[name] : undefined
if (!command) {
  process.stderr.write(usage)
  process.exitCode = name === undefined || name === 'help' || name === '--help' ? 0 : 2
} else {
  command().catch((err: unknown) => {
    process.stderr.write(`${name} failed: ${(err as Error)?.stack ?? String(err)}\n`)
    process.exitCode = 1
  })
}
