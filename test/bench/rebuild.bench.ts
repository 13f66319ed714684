/**
 * Projection rebuild events/s (goal ≥ 60k/s) on a log of ~100k organization/place-like events,
 * with the baseline of reading the same log through the port without projecting it.
 * Run: npx tsx test/bench/rebuild.bench.ts against the PostgreSQL in DATABASE_URL.
 */
import { openDatabase } from '../../src/infrastructure/database/connection.js'
import { migrateInfrastructure, migrateReadModels } from '../../src/infrastructure/database/migrate.js'
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store.js'
import { rebuildReadModels } from '../../src/cli/rebuild.js'
import { allProjections } from '../../projections/index.js'
import { fmt, median, scratchDatabase } from './bench-database.js'
import { writeOrganizationLog } from './organization-log.js'

const ORGS = Number(process.env.BENCH_ORGS ?? 20_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const BATCH = Number(process.env.BENCH_BATCH ?? 10_000)

const scratch = await scratchDatabase('rebuild')
const database = await openDatabase({ url: scratch.url, poolSize: 4 })
await migrateInfrastructure(database.db)
await migrateReadModels(database.db)
const store = new PostgresEventStore(database.db)
const total = await writeOrganizationLog(database.db, ORGS)

const readRates: number[] = []
const rebuildRates: number[] = []
// Round 0 warms the process and the server (JIT, plans, buffers) and is not counted.
for (let round = -1; round < ROUNDS; round++) {
  let checkpoint: string | null = null
  let read = 0
  const t0 = process.hrtime.bigint()
  for (;;) {
    const page = await store.readAll(checkpoint, BATCH)
    if (page.events.length === 0) break
    read += page.events.length
    checkpoint = page.checkpoint
  }
  const readRate = read / (Number(process.hrtime.bigint() - t0) / 1e9)
  const r = await rebuildReadModels({ database, store, batchSize: BATCH })
  if (r.events !== total) throw new Error(`rebuild replayed ${r.events} of ${total} events`)
  if (round < 0) continue
  readRates.push(readRate)
  rebuildRates.push(r.eventsPerSecond)
}

const read = median(readRates)
const rebuild = median(rebuildRates)
process.stdout.write([
  `projection rebuild, ${fmt(total)} events (${fmt(ORGS)} organizations with token, places, contracts), ${allProjections.length} projections (${allProjections.map((p) => p.name).join(', ')}), batches of ${BATCH}, median of ${ROUNDS} after a warm-up round`,
  `  baseline readAll through the port, no projection : ${fmt(read)} events/s   (rounds: ${readRates.map((x) => fmt(x)).join(', ')})`,
  `  rebuild (replay into a fresh schema, then swap)  : ${fmt(rebuild)} events/s   (rounds: ${rebuildRates.map((x) => fmt(x)).join(', ')})`,
  `  ratio rebuild / read                             : ${fmt(rebuild / read, 2)}×`,
  `  goal ≥ 60,000 events/s                           : ${rebuild >= 60_000 ? 'MET' : 'MISSED'}`,
  '',
].join('\n'))

await database.close()
await scratch.drop()
