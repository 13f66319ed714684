/**
 * Command line: `node --import tsx src/cli/index.ts <command>` (`npm run rebuild`, `npm run replay`,
 * `npm run analyst-role`, `npm run carry-over-pglite`). Configured from the environment
 * like the server (DATABASE_URL, EVENTSTORE_URL, DATA_DIR). Without DATABASE_URL a command uses
 * the embedded PostgreSQL: the running server's (on the same DATA_DIR), else one it starts for its run.
 */
import { parseArgs } from 'node:util'
import cliProgress from 'cli-progress'
import { ConfigError, loadConfig } from '../config.js'
import { openConfiguredDatabase } from '../infrastructure/database/configured-database.js'
import { migrateInfrastructure, migrateReadModels } from '../infrastructure/database/migrate.js'
import { createEventStore } from '../infrastructure/event-store/create-event-store.js'
import { rebuildReadModels } from './rebuild.js'
import { ReplayRefused } from './replay-refused.js'
import { ANALYST_ROLE_USAGE, AnalystRoleRefused, analystRole } from './analyst-role.js'
import { CARRY_OVER_USAGE, carryOverPgliteCommand } from './carry-over-pglite.js'
import { CarryOverFailed, CarryOverRefused } from './carry-over/pglite-carry-over.js'
import { EVENT_CONSUMERS } from '../processes/event-consumers.js'
import { errnoOf, messageOf, stackOf } from '../shared/thrown.js'

const usage = `usage: cli <command>

commands:
  rebuild   replay the whole event log into fresh read-model tables and swap them in
  replay <consumer> --after <position|start>
            hand an event consumer the events it skipped at its first start (it began at the
            head of the log) that come after <position>; consumers: ${Object.keys(EVENT_CONSUMERS).join(', ')}
  ${ANALYST_ROLE_USAGE}
  ${CARRY_OVER_USAGE}
`

async function rebuild(): Promise<void> {
  const config = loadConfig()
  const { database } = await openConfiguredDatabase(config, { role: 'rebuild' })
  try {
    await migrateInfrastructure(database.db)
    await migrateReadModels(database.db)
    const store = await createEventStore(config, database)
    try {
      const r = await rebuildReadModels({ database, store, progress: true })
      process.stdout.write(`rebuilt read models from ${r.events} events in ${r.seconds.toFixed(2)} s `
        + `(${Math.round(r.eventsPerSecond)} events/s); ${r.tailEvents} more applied during the swap`
        + `${r.grantsKept > 0 ? `; ${r.grantsKept} grants on the read models kept (analyst roles)` : ''}\n`)
    } finally {
      await store.close()
    }
  } finally {
    await database.close()
  }
}

async function replay(args: string[]): Promise<void> {
  const { positionals, values } = parseArgs({ args, options: { after: { type: 'string' } }, allowPositionals: true })
  const [consumer, ...extra] = positionals
  if (!consumer || extra.length > 0 || values.after === undefined) throw new ReplayRefused(usage)
  // Loaded here: the reactions' modules would slow every other command's start.
  const [{ eventConsumerSubjects, planReplay, runReplay }, { createBus }] = await Promise.all([
    import('./replay.js'), import('../infrastructure/bus/create-bus.js'),
  ])
  eventConsumerSubjects(consumer)
  const config = loadConfig()
  const { database } = await openConfiguredDatabase(config, { role: 'replay' })
  try {
    await migrateInfrastructure(database.db)
    const store = await createEventStore(config, database)
    const bus = await createBus({ natsUrl: config.natsUrl, db: database, nats: { streamName: config.natsStream, ...(config.natsSubjectPrefix ? { subjectPrefix: config.natsSubjectPrefix } : {}) } })
    try {
      const request = { db: database.db, store, bus, consumer, after: values.after }
      const plan = await planReplay(request)
      if (plan.count === 0) {
        process.stdout.write(`nothing to replay: ${consumer} has had every event after ${values.after}\n`)
        return
      }
      process.stdout.write(`replaying ${plan.count} events to ${consumer} (after ${values.after}, through its start position ${plan.through})\n`)
      const bar = new cliProgress.SingleBar({
        format: 'replay |{bar}| {percentage}% | {value}/{total} events | {duration_formatted}', hideCursor: true,
      }, cliProgress.Presets.shades_classic)
      bar.start(plan.count, 0)
      const r = await runReplay(request, plan, (n) => bar.update(n))
      bar.stop()
      process.stdout.write(`replayed ${r.delivered} events to ${consumer}; ${r.startMoved
        ? `its start position is now ${values.after}`
        : 'its start position was moved meanwhile by another replay and is left as it is'}\n`)
    } finally {
      await bus.close()
      await store.close()
    }
  } finally {
    await database.close()
  }
}

const commands: Record<string, (args: string[]) => Promise<void>> = { rebuild, replay, 'analyst-role': analystRole, 'carry-over-pglite': carryOverPgliteCommand }

const name = process.argv[2]
const command = name ? commands[name] : undefined
if (!command) {
  process.stderr.write(usage)
  process.exitCode = name === undefined || name === 'help' || name === '--help' ? 0 : 2
} else {
  command(process.argv.slice(3)).catch((err: unknown) => {
    if (err instanceof ReplayRefused || err instanceof AnalystRoleRefused || err instanceof CarryOverRefused || err instanceof ConfigError || errnoOf(err)?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${name}: ${messageOf(err)}\n`)
      process.exitCode = 2
      return
    }
    process.stderr.write(`${name} failed: ${err instanceof CarryOverFailed ? err.message : stackOf(err)}\n`)
    process.exitCode = 1
  })
}
