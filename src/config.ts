import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { resolve } from 'node:path'
import { type Static, Type, type TSchema } from 'typebox'
import { Value } from 'typebox/value'
import { errnoOf } from './shared/thrown.js'

/**
 * Every setting the server reads from the environment, as one TypeBox schema per variable: the type
 * and the rule (checked at start, a wrong value named with its rule), the default, and what it
 * means. The README's configuration table is generated from this list (`npm run docs:config`), and
 * a test keeps the two equal.
 */
interface Setting {
  schema: TSchema & Keywords
  /** What the README's default column says when the default is not a constant (`(embedded PostgreSQL)`). */
  shownDefault?: string
  meaning: string
  /** The rule in words, when the schema's own keywords would not say it well. */
  rule?: string
  /** A wrong value is not echoed in the error (it is a credential). */
  secret?: true
}

/** The keywords read back from a setting's schema (TSchema names none), each checked before use. */
interface Keywords {
  type?: unknown
  default?: unknown
  minimum?: unknown
  exclusiveMinimum?: unknown
  maximum?: unknown
}

const integer = (defaultValue: number, minimum: number, maximum?: number) =>
  Type.Integer({ default: defaultValue, minimum, ...(maximum !== undefined ? { maximum } : {}) })
const optionalText = (pattern?: string) => Type.String({ minLength: 1, ...(pattern ? { pattern } : {}) })

/** A browser origin: scheme, host and optional port, no path (what a browser sends in `Origin`). */
const ORIGIN = 'https?://[A-Za-z0-9.-]+(:\\d{1,5})?'
/** A trusted proxy: an IPv4 or IPv6 address, optionally a CIDR range (`10.0.0.0/8`, `fd00::/8`). */
const TRUSTED = '(\\d{1,3}(\\.\\d{1,3}){3}(/\\d{1,2})?|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*(/\\d{1,3})?)'

export const SETTINGS = {
  PORT: { schema: integer(3000, 0, 65535), meaning: 'the TCP port the API listens on (0: any free port)' },
  HOST: { schema: Type.String({ default: '127.0.0.1', minLength: 1 }), meaning: 'the address the API listens on (`0.0.0.0`: every interface)' },
  DATA_DIR: { schema: Type.String({ default: './data', minLength: 1 }), meaning: 'embedded PostgreSQL (`postgres/`), blobs, generated secrets' },
  DATABASE_URL: {
    schema: optionalText('^postgres(ql)?://'), shownDefault: '(embedded PostgreSQL)', rule: 'a postgres:// or postgresql:// URL',
    meaning: 'a PostgreSQL server of your own (15 or later) for the read models, and the event log unless `EVENTSTORE_URL` says otherwise; unset, the platform runs an embedded PostgreSQL 18 in `DATA_DIR/postgres`',
  },
  DATABASE_CONNECT_TIMEOUT_MS: {
    schema: integer(5000, 100, 60_000),
    meaning: 'PostgreSQL: a connection not established within this long fails, as does a wait this long for a free one in a pool; a request then answers 503 with `Retry-After` instead of hanging while the database is down or saturated',
  },
  EVENTSTORE_URL: {
    schema: optionalText('^(postgres(ql)?|esdb|esdb\\+discover|kurrentdb|kurrentdb\\+discover|kurrent|kurrent\\+discover)://'),
    shownDefault: 'the read-model database', rule: 'a postgres://, esdb:// or kurrentdb:// URL',
    meaning: '`esdb://…` / `kurrentdb://…` for EventStoreDB/KurrentDB',
  },
  NATS_URL: {
    schema: optionalText('^(nats|tls)://'), shownDefault: '(in-process bus)', rule: 'a nats:// or tls:// URL (several: comma-separated)',
    meaning: 'NATS JetStream for the relay, the notifier and timers',
  },
  NATS_STREAM: {
    schema: Type.String({ default: 'PLATFORM', pattern: '^[A-Za-z0-9_-]{1,64}$' }), rule: 'letters, digits, `_` and `-`',
    meaning: 'the JetStream stream the bus uses: two deployments sharing one NATS server need a stream and a subject prefix each',
  },
  NATS_SUBJECT_PREFIX: {
    schema: Type.String({ pattern: '^([A-Za-z0-9_-]+\\.)+$' }), shownDefault: 'none', rule: 'tokens ending in a dot, e.g. `staging.`',
    meaning: 'put before every bus subject on the wire',
  },
  NATS_STREAM_REPLICAS: {
    schema: integer(1, 1, 5),
    meaning: 'copies of the bus\'s JetStream stream, and of each of its consumers, the NATS cluster keeps: 3 on a 3-node cluster (the loss of one node is survived), 1 on a single server. A stream made with another number is scaled to it at start (its consumers follow); one the cluster cannot scale keeps working and the log says so',
  },
  BLOB_DIR: { schema: optionalText(), shownDefault: '`$DATA_DIR/blobs`', meaning: 'labels and attachments' },
  ADMIN_TOKEN: {
    schema: Type.String({ minLength: 16 }), shownDefault: 'generated into `DATA_DIR`', rule: 'at least 16 characters', secret: true,
    meaning: 'bearer token of the admin API',
  },
  ADMIN_TOKEN_FILE: {
    schema: optionalText(), shownDefault: 'none', rule: 'a readable file',
    meaning: 'a file holding `ADMIN_TOKEN` (a Docker secret, `/run/secrets/…`), read when `ADMIN_TOKEN` is unset',
  },
  SECRETS_KEY: {
    schema: Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$' }), shownDefault: 'generated into `DATA_DIR`', rule: '32 bytes, base64-encoded (44 characters)', secret: true,
    meaning: 'encrypts carriers\' HMAC secrets at rest',
  },
  SECRETS_KEY_FILE: {
    schema: optionalText(), shownDefault: 'none', rule: 'a readable file',
    meaning: 'a file holding `SECRETS_KEY` (a Docker secret), read when `SECRETS_KEY` is unset',
  },
  BASE_DOMAIN: {
    schema: optionalText('^[A-Za-z0-9.-]+$'), shownDefault: 'none', rule: 'a domain name',
    meaning: 'when set, a request to `{subdomain}.{BASE_DOMAIN}` with another organization\'s token gets 403',
  },
  PUBLIC_BASE_URL: {
    schema: optionalText('^https?://[^\\s/?#]+(/[^\\s?#]*[^\\s?#/])?$'), shownDefault: 'the request\'s own origin',
    rule: 'an absolute http(s) URL without a trailing slash',
    meaning: 'where clients reach the API from outside (a proxy\'s address): every link the server hands out (live links, tracking links, pagination) and the OpenAPI document\'s `servers` start with it',
  },
  TRUST_PROXY: {
    schema: optionalText(`^\\s*${TRUSTED}(\\s*,\\s*${TRUSTED})*\\s*$`), shownDefault: 'none (no proxy trusted)',
    rule: 'IP addresses or CIDR ranges (`10.0.0.0/8`, `::1`) separated by commas',
    meaning: 'proxies whose `X-Forwarded-For`/`-Proto`/`-Host` are believed (the client\'s address, and the scheme and host of links when `PUBLIC_BASE_URL` is unset); from anyone else they are ignored',
  },
  MAP_TILE_URL: {
    schema: optionalText('^https?://[^\\s/?#]+/\\S*\\{z\\}\\S*\\{x\\}\\S*\\{y\\}\\S*$'), shownDefault: 'none (maps drawn without tiles)',
    rule: 'an http(s) URL template with `{z}`, `{x}` and `{y}`',
    meaning: 'map tiles under the live route page\'s map (Leaflet, served from this server); unset, the map is drawn from coordinates alone with no outside request',
  },
  RATE_LIMIT_PER_MINUTE: {
    schema: integer(600, 0),
    meaning: 'requests per token and minute, shared by all API processes on PostgreSQL (0: off); above it, 409 with `Retry-After`',
  },
  ROUTING_SPEED_KMH: {
    schema: Type.Number({ default: 30, exclusiveMinimum: 0, maximum: 300 }),
    meaning: 'the speed the route planner (`/routes/plan`, `/routes/{id}/optimize`) and the ETAs assume between stops, over the great-circle distance (ETAs learn each driver\'s own from its legs)',
  },
  POSITION_RETENTION_DAYS: {
    schema: integer(7, 1, 3650),
    meaning: 'drivers\' reported positions are kept this many days, then pruned (telemetry, not events: the ETA tables a rebuild reproduces reach back as far)',
  },
  DELAY_THRESHOLD_MINUTES: {
    schema: integer(10, 0, 1440),
    meaning: 'a task is reported delayed (`TaskDelayed`, webhook `task.delayed`) when its ETA passes the end of its time window by this much',
  },
  CLOCK_RATE: {
    schema: Type.Number({ default: 1, minimum: 1, maximum: 1000 }),
    meaning: 'development only: the server\'s clock runs this many times faster than real time from its start, so a simulated day (`npm run simulate`) passes in minutes; 1 in production',
  },
  ALLOW_PRIVATE_URLS: {
    schema: Type.Boolean({ default: false }), rule: '`true` or `false`',
    meaning: 'allow loopback and private callback URLs (tests and development only)',
  },
  SHIPMENT_EXPIRY_HOURS: { schema: integer(168, 1), meaning: 'a shipment that is not ready within this time expires' },
  WEBHOOK_RETRY_DELAYS_MS: {
    schema: Type.String({ default: '5000,300000,1800000,7200000,18000000,36000000,36000000', pattern: '^\\d+(,\\d+)*$' }),
    rule: 'whole milliseconds separated by commas', meaning: 'webhook retry schedule: the delay before each retry',
  },
  WEBHOOK_TIMEOUT_MS: { schema: integer(5000, 100, 60_000), meaning: 'a webhook answered 2xx within this time is delivered; later is a failed attempt' },
  QUOTE_TIMEOUT_MS: { schema: integer(500, 50, 30_000), meaning: 'a carrier\'s quote callback must answer within this time, else its fixed tariff quotes' },
  LOG_FORMAT: {
    schema: Type.Union((['auto', 'json', 'pretty'] as const).map((l) => Type.Literal(l)), { default: 'auto' }),
    meaning: '`json`: one JSON object per line (for a log collector); `pretty`: readable coloured lines (pino-pretty); `auto`: pretty when stdout is a terminal',
  },
  CORS_ORIGINS: {
    schema: optionalText(`^\\s*(\\*|${ORIGIN}(\\s*,\\s*${ORIGIN})*)\\s*$`), shownDefault: 'none (no CORS headers)',
    rule: 'origins (`https://app.example.com`, `http://localhost:5173`) separated by commas, or `*`',
    meaning: 'browser apps served from these origins may call the API (CORS; bearer tokens, no cookies)',
  },
  LOG_LEVEL: {
    schema: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)), { default: 'info' }),
    meaning: 'pino level; every log line carries the request id (`x-request-id`); tokens put in a query string are redacted',
  },
  PROJECTION_WAIT_MS: {
    schema: integer(5000, 100, 60_000),
    meaning: 'how long a write waits at most for the read models to show it before answering (read-your-writes)',
  },
  REQUEST_STATEMENT_TIMEOUT_MS: {
    schema: integer(10_000, 0, 3_600_000),
    meaning: 'a statement of a listing (every paginated listing, the carrier feed, delivery logs, positions) is cancelled after this long and the request answered 503 with `Retry-After` (0: no limit); a listing whose client disconnects has its running statement cancelled at once. Other requests and background work are never cut',
  },
  AUTH_CACHE_TTL_MS: {
    schema: integer(2000, 0, 60_000),
    meaning: 'how long a token\'s organization may be reused without a look-up, should a revocation notice be lost (0: no cache)',
  },
  SHIPMENT_VIEW_CACHE_ENTRIES: {
    schema: integer(4000, 0, 10_000_000),
    meaning: '`GET /shipments/{id}` answers kept in memory per process, about 2 KB each, dropped by the read model\'s change notices (0: no cache)',
  },
  SSE_HEARTBEAT_MS: {
    schema: integer(15_000, 1000, 300_000), meaning: 'live progress streams: a comment line this often keeps proxies and clients from closing them',
  },
  SSE_STREAMS_PER_ADDRESS: {
    schema: integer(100, 0),
    meaning: 'server-sent event streams (tracking pages, live route pages, route progress) one client address may hold open in one API process (an IPv6 address by its /64; 0: no cap); beyond it, 429 with `Retry-After`. Behind a proxy, name it in `TRUST_PROXY`, or every client is the proxy\'s address',
  },
  SSE_STREAMS_PER_PROCESS: {
    schema: integer(5000, 0),
    meaning: 'server-sent event streams one API process holds open in all (0: no cap); beyond it, 429 with `Retry-After`',
  },
  TRACKING_RATE_LIMIT_PER_MINUTE: {
    schema: integer(120, 0),
    meaning: 'public tracking pages (`/track/…`): requests per client address (an IPv6 address by its /64) and minute (0: off); above it, 429 with `Retry-After`',
  },
  LIVE_PAGE_RATE_LIMIT_PER_MINUTE: {
    schema: integer(120, 0),
    meaning: 'live route pages (`/live/…`: the page, its data, stream and assets): requests per client address and minute (0: off); above it, 429 with `Retry-After`',
  },
  AUDIT_ORIGIN: {
    schema: Type.String({ default: '', pattern: '^[^\\s+]*$' }), shownDefault: '`<PUBLIC_BASE_URL host and path>/audit`, else `shipping-platform/audit`', rule: 'no spaces or `+`',
    meaning: 'the log\'s name on its checkpoints (C2SP tlog-checkpoint origin line, and the name of its note key): witnesses and auditors know the log by it, so it never changes',
  },
  AUDIT_WITNESSES: {
    schema: Type.String({ default: '', pattern: '^(|[^\\s,@]+@https?://[^\\s,]+(\\s*,\\s*[^\\s,@]+@https?://[^\\s,]+)*)$' }), shownDefault: 'none',
    rule: 'comma-separated `<witness vkey>@<url>`',
    meaning: 'C2SP tlog-witness witnesses (e.g. `npm run witness`) that must cosign every checkpoint before the notary signs it; the notary refuses a tree that does not extend what they cosigned',
  },
  NOTARY_KEY: {
    schema: Type.String({ pattern: '^([A-Za-z0-9+/]{43}=|-----BEGIN PRIVATE KEY-----[\\s\\S]+-----END PRIVATE KEY-----)$' }),
    shownDefault: 'generated into `DATA_DIR`', rule: 'an Ed25519 private key: PKCS#8 PEM, or its 32-byte seed in base64', secret: true,
    meaning: 'signs the audit log\'s tree heads (`/audit/v1/public-key` shows its public half)',
  },
  NOTARY_KEY_FILE: {
    schema: optionalText(), shownDefault: 'none', rule: 'a readable file',
    meaning: 'a file holding `NOTARY_KEY` (a PEM from `openssl genpkey -algorithm ed25519`, or a Docker secret), read when `NOTARY_KEY` is unset',
  },
  NOTARY_ROLE: {
    schema: Type.Union((['on', 'off'] as const).map((l) => Type.Literal(l)), { default: 'on' }),
    meaning: '`off`: this API process runs no notary and never generates the notary key (the audit read endpoints answer from the tables; those that need the key read it only when configured); run `npm run notary` alone beside it, so that only one process holds the key',
  },
  NOTARY_SIGN_INTERVAL_MS: { schema: integer(2000, 100, 60_000), meaning: 'the notary signs a new tree head at most this long after the log grew' },
  NOTARY_SIGN_EVERY_EVENTS: { schema: integer(1000, 1), meaning: 'the notary signs a new tree head at once after this many events (else after `NOTARY_SIGN_INTERVAL_MS`)' },
  AUDIT_READY_LAG_SECONDS: {
    schema: integer(60, 1),
    meaning: '`/ready` says `degraded` (check `notary`) once an event has waited longer than this to be sealed; `audit-log check` names each unsealed event older than this',
  },
} satisfies Record<string, Setting>

export type SettingName = keyof typeof SETTINGS
const isSettingName = (name: string): name is SettingName => Object.hasOwn(SETTINGS, name)
/** Every setting, in SETTINGS' order. */
const SETTING_NAMES: readonly SettingName[] = Object.keys(SETTINGS).filter(isSettingName)
/** Settings without a default: undefined when unset. */
type Unset = 'DATABASE_URL' | 'PUBLIC_BASE_URL' | 'EVENTSTORE_URL' | 'NATS_URL' | 'NATS_SUBJECT_PREFIX' | 'BLOB_DIR' | 'ADMIN_TOKEN' | 'SECRETS_KEY' | 'BASE_DOMAIN'
  | 'ADMIN_TOKEN_FILE' | 'SECRETS_KEY_FILE' | 'CORS_ORIGINS' | 'NOTARY_KEY' | 'NOTARY_KEY_FILE' | 'TRUST_PROXY' | 'MAP_TILE_URL'
type Settings = { [K in SettingName]: Static<(typeof SETTINGS)[K]['schema']> | (K extends Unset ? undefined : never) }

/** Every knob the process reads from the environment, parsed once (DESIGN §3.1). */
export interface Config {
  port: number
  host: string
  dataDir: string
  databaseUrl: string | undefined
  /** PostgreSQL: establishing a connection (or waiting for a free one) fails after this long. */
  databaseConnectTimeoutMs: number
  eventStoreUrl: string | undefined
  natsUrl: string | undefined
  /** JetStream stream and wire prefix of the bus (two deployments on one NATS server). */
  natsStream: string
  natsSubjectPrefix: string | undefined
  /** Copies of the JetStream stream and its consumers (3 on a 3-node cluster). */
  natsStreamReplicas: number
  blobDir: string
  baseDomain: string | undefined
  /** Where clients reach the API (`https://api.example.com`, no trailing slash); undefined: the request's own origin. */
  publicBaseUrl: string | undefined
  /** Proxies (addresses, CIDR ranges) whose X-Forwarded-* headers are believed; empty: none. */
  trustProxy: string[]
  /** Tiles under the live page's map (`{z}/{x}/{y}` template); undefined: no tiles, no outside request. */
  mapTileUrl: string | undefined
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
  /** PostgreSQL: the statement timeout of a request's reads (platform.readsFor; 0: none). */
  requestStatementTimeoutMs: number
  /** How long an organization token → organization lookup may be reused (src/http/auth-cache.ts); 0 disables. */
  authCacheTtlMs: number
  /** `GET /shipments/{id}` answers kept per process (src/shipments/view-cache.ts); 0 disables. */
  shipmentViewCacheEntries: number
  /** Live route progress streams: a comment line this often keeps proxies and clients from timing out. */
  sseHeartbeatMs: number
  /** Open event streams one client address may hold in this process, and the process in all (0: no cap). */
  sseStreamsPerAddress: number
  sseStreamsPerProcess: number
  trackingRateLimitPerMinute: number
  livePageRateLimitPerMinute: number
  /** Travel speed the route planner assumes between two points (haversine distance). */
  routingSpeedKmh: number
  /** Drivers' positions older than this are pruned. */
  positionRetentionDays: number
  /** An ETA this far past its window's end makes the task delayed. */
  delayThresholdMinutes: number
  /** Development only: how many times faster than real time the platform's clock runs. */
  clockRate: number
  /** Origins whose browser apps may call the API; `*` any; empty: no CORS headers. */
  corsOrigins: string[]
  logFormat: 'auto' | 'json' | 'pretty'
  /** The audit notary's Ed25519 signing key (PEM or base64 seed; NOTARY_KEY_FILE's content); generated into DATA_DIR when unset. */
  notaryKey: string | undefined
  /** The file `notaryKey` was read from (NOTARY_KEY_FILE), so that tools can say where their key came from; undefined when NOTARY_KEY gave it. */
  notaryKeyFile: string | undefined
  notarySignIntervalMs: number
  /** `off`: the API process seals nothing and generates no key (`npm run notary` runs the notary). */
  notaryRole: 'on' | 'off'
  /** AUDIT_ORIGIN as set ('' : derived, see auditOriginOf). */
  auditOrigin: string
  auditWitnesses: string
  notarySignEveryEvents: number
  auditReadyLagSeconds: number
}

/** Every setting that failed its rule, each named: `PORT must be a whole number from 0 to 65535, got "abc"`. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

/** The rule of a setting in words, from its schema's keywords unless it says its own. */
export function ruleOf(name: SettingName): string {
  const setting: Setting = SETTINGS[name]
  if (setting.rule) return setting.rule
  const s = setting.schema
  if (Type.IsUnion(s)) return `one of ${s.anyOf.map((x) => String(Type.IsLiteral(x) ? x.const : undefined)).join(', ')}`
  const range = (what: string) => {
    const low = s.exclusiveMinimum !== undefined ? `above ${s.exclusiveMinimum}` : s.minimum !== undefined ? `from ${s.minimum}` : ''
    const high = s.maximum !== undefined ? `${low ? ' ' : ''}${low.startsWith('from') ? 'to' : 'up to'} ${s.maximum}` : ''
    const bounds = low.startsWith('from') && high === '' ? `of at least ${s.minimum}` : `${low}${high}`
    return bounds ? `${what} ${bounds}` : what
  }
  if (s.type === 'integer') return range('a whole number')
  if (s.type === 'number') return range('a number')
  if (s.type === 'boolean') return '`true` or `false`'
  return 'a non-empty text'
}

/** The value of each setting (its default when unset or empty), or ConfigError naming every bad one. */
export function readSettings(given: NodeJS.ProcessEnv): Settings {
  const problems: string[] = []
  const env = withSecretFiles(given, problems)
  const out: Partial<Record<SettingName, unknown>> = {}
  for (const name of SETTING_NAMES) {
    const setting: Setting = SETTINGS[name]
    const { schema } = setting
    const raw = env[name]
    if (raw === undefined || raw.trim() === '') {
      out[name] = schema.default
      continue
    }
    const text = raw.trim()
    const numeric = schema.type === 'integer' || schema.type === 'number'
    // Only plain decimals count as numbers: `1e3` or `0x10` in a port is a typo, not a wish.
    const value = numeric && !/^[+-]?\d+(\.\d+)?$/.test(text) ? text : Value.Convert(schema, text)
    if (Value.Check(schema, value)) out[name] = value
    else problems.push(`${name} must be ${ruleOf(name)}, got ${setting.secret ? `${raw.length} characters` : JSON.stringify(raw)}`)
  }
  const proxies = typeof out.TRUST_PROXY === 'string' ? out.TRUST_PROXY : undefined
  const bad = proxies?.split(',').map((a) => a.trim()).find((a) => !validProxyAddress(a))
  if (bad !== undefined) problems.push(`TRUST_PROXY must be ${ruleOf('TRUST_PROXY')}, got ${JSON.stringify(bad)} in ${JSON.stringify(env.TRUST_PROXY)}`)
  if (problems.length > 0) throw new ConfigError(problems)
  return out as Settings
}

/** An address or CIDR range fastify's `trustProxy` takes: a real IPv4/IPv6 address and a prefix within its size. */
function validProxyAddress(text: string): boolean {
  const [addr = '', prefix, ...rest] = text.split('/')
  const kind = isIP(addr)
  if (kind === 0 || rest.length) return false
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (kind === 4 ? 32 : 128))
}

/**
 * `ADMIN_TOKEN_FILE` / `SECRETS_KEY_FILE` / `NOTARY_KEY_FILE`: the variable's value from a file (how Docker and
 * Kubernetes hand over secrets), when the variable itself is unset; checked by the variable's rule.
 */
function withSecretFiles(env: NodeJS.ProcessEnv, problems: string[]): NodeJS.ProcessEnv {
  const out = { ...env }
  for (const name of ['ADMIN_TOKEN', 'SECRETS_KEY', 'NOTARY_KEY'] as const) {
    const file = env[`${name}_FILE`]?.trim()
    if (!file || (env[name] ?? '').trim() !== '') continue
    try {
      out[name] = readFileSync(file, 'utf8').trim()
    } catch (err) {
      problems.push(`${name}_FILE must be ${ruleOf(`${name}_FILE`)}, got ${JSON.stringify(file)} (${errnoOf(err) ?? String(err)})`)
    }
  }
  return out
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const s = readSettings(env)
  const dataDir = resolve(s.DATA_DIR)
  return {
    port: s.PORT,
    host: s.HOST,
    dataDir,
    databaseUrl: s.DATABASE_URL,
    databaseConnectTimeoutMs: s.DATABASE_CONNECT_TIMEOUT_MS,
    eventStoreUrl: s.EVENTSTORE_URL,
    natsUrl: s.NATS_URL,
    natsStream: s.NATS_STREAM,
    natsSubjectPrefix: s.NATS_SUBJECT_PREFIX,
    natsStreamReplicas: s.NATS_STREAM_REPLICAS,
    blobDir: resolve(s.BLOB_DIR ?? `${dataDir}/blobs`),
    baseDomain: s.BASE_DOMAIN,
    publicBaseUrl: s.PUBLIC_BASE_URL,
    trustProxy: s.TRUST_PROXY?.split(',').map((a) => a.trim()).filter(Boolean) ?? [],
    mapTileUrl: s.MAP_TILE_URL,
    adminToken: s.ADMIN_TOKEN,
    secretsKey: s.SECRETS_KEY,
    rateLimitPerMinute: s.RATE_LIMIT_PER_MINUTE,
    allowPrivateUrls: s.ALLOW_PRIVATE_URLS,
    shipmentExpiryHours: s.SHIPMENT_EXPIRY_HOURS,
    webhookRetryDelaysMs: s.WEBHOOK_RETRY_DELAYS_MS.split(',').map(Number),
    webhookTimeoutMs: s.WEBHOOK_TIMEOUT_MS,
    quoteTimeoutMs: s.QUOTE_TIMEOUT_MS,
    logLevel: s.LOG_LEVEL,
    projectionWaitMs: s.PROJECTION_WAIT_MS,
    requestStatementTimeoutMs: s.REQUEST_STATEMENT_TIMEOUT_MS,
    authCacheTtlMs: s.AUTH_CACHE_TTL_MS,
    shipmentViewCacheEntries: s.SHIPMENT_VIEW_CACHE_ENTRIES,
    sseHeartbeatMs: s.SSE_HEARTBEAT_MS,
    sseStreamsPerAddress: s.SSE_STREAMS_PER_ADDRESS,
    sseStreamsPerProcess: s.SSE_STREAMS_PER_PROCESS,
    trackingRateLimitPerMinute: s.TRACKING_RATE_LIMIT_PER_MINUTE,
    livePageRateLimitPerMinute: s.LIVE_PAGE_RATE_LIMIT_PER_MINUTE,
    routingSpeedKmh: s.ROUTING_SPEED_KMH,
    positionRetentionDays: s.POSITION_RETENTION_DAYS,
    delayThresholdMinutes: s.DELAY_THRESHOLD_MINUTES,
    clockRate: s.CLOCK_RATE,
    corsOrigins: s.CORS_ORIGINS?.split(',').map((o) => o.trim()) ?? [],
    logFormat: s.LOG_FORMAT,
    notaryKey: s.NOTARY_KEY,
    notaryKeyFile: s.NOTARY_KEY !== undefined && (env.NOTARY_KEY ?? '').trim() === '' ? env.NOTARY_KEY_FILE?.trim() : undefined,
    notarySignIntervalMs: s.NOTARY_SIGN_INTERVAL_MS,
    notaryRole: s.NOTARY_ROLE,
    auditOrigin: s.AUDIT_ORIGIN,
    auditWitnesses: s.AUDIT_WITNESSES,
    notarySignEveryEvents: s.NOTARY_SIGN_EVERY_EVENTS,
    auditReadyLagSeconds: s.AUDIT_READY_LAG_SECONDS,
  }
}

/** The README's configuration table, generated from SETTINGS (`npm run docs:config` writes it). */
export function configurationTable(): string {
  const rows = SETTING_NAMES.map((name) => {
    const setting: Setting = SETTINGS[name]
    const d = setting.schema.default
    const shown = setting.shownDefault ?? (d === undefined ? 'none' : `\`${String(d)}\``)
    return `| \`${name}\` | ${shown} | ${ruleOf(name)} | ${setting.meaning} |`
  })
  return ['| variable | default | rule | meaning |', '|---|---|---|---|', ...rows].join('\n')
}
