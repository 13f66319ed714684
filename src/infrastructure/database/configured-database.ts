import type { Config } from '../../config.js'
import { openDatabase, type DatabaseHandle } from './connection.js'
import { startEmbeddedServer, type EmbeddedServer } from './embedded/embedded-server.js'

export interface ConfiguredDatabase {
  /** Its `close` also stops the embedded server when this process started it. */
  database: DatabaseHandle
  /** The embedded server, when DATABASE_URL is unset. */
  embedded?: EmbeddedServer
}

/**
 * DATABASE_URL's server, or else the embedded one in DATA_DIR. A platform (`role: 'platform'`)
 * starts the embedded server and is refused when another process has it; a CLI command attaches
 * to the server of a platform running on the same DATA_DIR, or starts one for its own run.
 */
export async function openConfiguredDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'databaseConnectTimeoutMs'>,
  opts: { role: string; log?: (msg: string) => void },
): Promise<ConfiguredDatabase> {
  const connectTimeoutMs = config.databaseConnectTimeoutMs
  if (config.databaseUrl) return { database: await openDatabase({ url: config.databaseUrl, connectTimeoutMs }) }
  const embedded = await startEmbeddedServer({
    dataDir: config.dataDir, role: opts.role, attach: opts.role !== 'platform', ...(opts.log ? { log: opts.log } : {}),
  })
  let database: DatabaseHandle
  try {
    database = await openDatabase({ url: embedded.url, connectTimeoutMs })
  } catch (err) {
    await embedded.stop()
    throw err
  }
  const closePools = database.close.bind(database)
  return {
    database: { ...database, close: async () => { try { await closePools() } finally { await embedded.stop() } } },
    embedded,
  }
}
