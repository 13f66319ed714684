import type { Config } from './config.js'

/** What `npm start` says it runs on, in one line: a newcomer sees where things are, an operator what was picked up. */
export interface StartupSummary {
  database: string
  event_store: string
  bus: string
  data_dir: string
  docs: string
}

/** `postgres://user:secret@db:5432/shipping?x` → `db:5432/shipping`: where, never who or with what password. */
function place(url: string): string {
  try {
    const u = new URL(url)
    return `${u.host}${u.pathname === '/' ? '' : u.pathname}`
  } catch {
    return '(unparsable URL)'
  }
}

/** NATS_URL may list several servers (nats:// or tls://), each possibly with credentials. */
const natsPlaces = (urls: string) => urls.split(',').map((u) => `${/^(\w+):/.exec(u.trim())?.[1] ?? 'nats'}://${place(u.trim())}`).join(', ')

/**
 * Listening on every interface (`0.0.0.0`, `::`), the docs are reached as localhost. `embedded`:
 * what the embedded server says of itself (version, directory, socket, pid), when it runs.
 */
export function startupSummary(config: Config, port: number, embedded?: string): StartupSummary {
  const database = config.databaseUrl ? `PostgreSQL ${place(config.databaseUrl)}` : embedded ?? `embedded PostgreSQL in ${config.dataDir}/postgres`
  const store = config.eventStoreUrl
  const eventStore = store && !/^postgres/.test(store) ? `KurrentDB ${place(store)}` : 'the database above (events table)'
  const host = ['0.0.0.0', '::', ''].includes(config.host) ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host
  return {
    database,
    event_store: eventStore,
    bus: config.natsUrl ? `NATS JetStream ${natsPlaces(config.natsUrl)}` : 'in-process (in the database)',
    data_dir: config.dataDir,
    docs: `http://${host}:${port}/docs`,
  }
}

export function startupLine(s: StartupSummary): string {
  return `ready: database ${s.database}; event store ${s.event_store}; bus ${s.bus}; DATA_DIR ${s.data_dir}; API reference at ${s.docs}`
}
