import { resolve } from 'node:path'

/** Every knob the process reads from the environment, parsed once (DESIGN §3.1). */
export interface Config {
  port: number
  host: string
  dataDir: string
  databaseUrl: string | undefined
  eventStoreUrl: string | undefined
  natsUrl: string | undefined
  blobDir: string
  baseDomain: string | undefined
  adminToken: string | undefined
  secretsKey: string | undefined
  rateLimitPerMinute: number
  allowPrivateUrls: boolean
  shipmentExpiryHours: number
  webhookRetryDelaysMs: number[]
  webhookTimeoutMs: number
  quoteTimeoutMs: number
  logLevel: string
  projectionWaitMs: number
  /** How long an organization token → organization lookup may be reused (src/http/auth-cache.ts); 0 disables. */
  authCacheTtlMs: number
  /** Embedded database only: how often busy tables are vacuumed (PGlite has no autovacuum); 0 disables. */
  embeddedVacuumIntervalMs: number
  /** Live route progress streams: a comment line this often keeps proxies and clients from timing out. */
  sseHeartbeatMs: number
  /** Travel speed the route planner assumes between two points (haversine distance). */
  routingSpeedKmh: number
}

const intFrom = (raw: string | undefined, fallback: number): number => {
  if (raw === undefined || raw.trim() === '') return fallback
  const n = Number(raw)
  if (!Number.isFinite(n)) throw new Error(`expected a number, got "${raw}"`)
  return n
}

/** A number above zero (a speed of 0 would make every trip endless). */
const positiveFrom = (raw: string | undefined, fallback: number, name: string): number => {
  const n = intFrom(raw, fallback)
  if (!(n > 0)) throw new Error(`${name} must be above 0, got "${raw}"`)
  return n
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = resolve(env.DATA_DIR ?? './data')
  return {
    port: intFrom(env.PORT, 3000),
    host: env.HOST ?? '127.0.0.1',
    dataDir,
    databaseUrl: env.DATABASE_URL || undefined,
    eventStoreUrl: env.EVENTSTORE_URL || undefined,
    natsUrl: env.NATS_URL || undefined,
    blobDir: resolve(env.BLOB_DIR ?? `${dataDir}/blobs`),
    baseDomain: env.BASE_DOMAIN || undefined,
    adminToken: env.ADMIN_TOKEN || undefined,
    secretsKey: env.SECRETS_KEY || undefined,
    rateLimitPerMinute: intFrom(env.RATE_LIMIT_PER_MINUTE, 600),
    allowPrivateUrls: env.ALLOW_PRIVATE_URLS === 'true',
    shipmentExpiryHours: intFrom(env.SHIPMENT_EXPIRY_HOURS, 168),
    webhookRetryDelaysMs: (env.WEBHOOK_RETRY_DELAYS_MS ?? '5000,300000,1800000,7200000,18000000,36000000,36000000')
      .split(',').map((s) => intFrom(s, 0)),
    webhookTimeoutMs: intFrom(env.WEBHOOK_TIMEOUT_MS, 5000),
    quoteTimeoutMs: intFrom(env.QUOTE_TIMEOUT_MS, 500),
    logLevel: env.LOG_LEVEL ?? 'info',
    projectionWaitMs: intFrom(env.PROJECTION_WAIT_MS, 5000),
    authCacheTtlMs: intFrom(env.AUTH_CACHE_TTL_MS, 2000),
    embeddedVacuumIntervalMs: intFrom(env.EMBEDDED_VACUUM_INTERVAL_MS, 5 * 60 * 1000),
    sseHeartbeatMs: intFrom(env.SSE_HEARTBEAT_MS, 15_000),
    routingSpeedKmh: positiveFrom(env.ROUTING_SPEED_KMH, 30, 'ROUTING_SPEED_KMH'),
  }
}
