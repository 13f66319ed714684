import t from 'tap'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { spawnSync } from 'node:child_process'
import { ConfigError, configurationTable, loadConfig, SETTINGS } from '../src/config.js'
import { README, TABLE_PATTERN } from '../src/cli/config-table.js'

const root = join(import.meta.dirname, '..')
const problemsOf = (env: NodeJS.ProcessEnv): string[] => {
  try { loadConfig(env); return [] } catch (err) { return err instanceof ConfigError ? err.problems : [`not a ConfigError: ${String(err)}`] }
}

t.test('ROUTING_SPEED_KMH: 30 by default, a number above 0', async (t) => {
  t.equal(loadConfig({}).routingSpeedKmh, 30)
  t.equal(loadConfig({ ROUTING_SPEED_KMH: '22.5' }).routingSpeedKmh, 22.5)
  t.match(problemsOf({ ROUTING_SPEED_KMH: 'fast' }), [/^ROUTING_SPEED_KMH must be a number above 0/])
  t.match(problemsOf({ ROUTING_SPEED_KMH: '0' }), [/^ROUTING_SPEED_KMH must be a number above 0/])
  t.match(problemsOf({ ROUTING_SPEED_KMH: '-5' }), [/^ROUTING_SPEED_KMH must be a number above 0/])
})

t.test('a wrong setting is named with its rule and the value given; every wrong one at once', async (t) => {
  t.same(problemsOf({ PORT: 'abc' }), ['PORT must be a whole number from 0 to 65535, got "abc"'])
  t.same(problemsOf({ LOG_LEVEL: 'verbose' }), ['LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"'])
  t.same(problemsOf({ RATE_LIMIT_PER_MINUTE: '-5' }), ['RATE_LIMIT_PER_MINUTE must be a whole number of at least 0, got "-5"'])
  t.same(problemsOf({ PORT: '1e3' }), ['PORT must be a whole number from 0 to 65535, got "1e3"'], 'only plain decimals are numbers')
  t.match(problemsOf({ ALLOW_PRIVATE_URLS: 'yes' }), [/^ALLOW_PRIVATE_URLS must be `true` or `false`/], 'no silent false')
  t.match(problemsOf({ WEBHOOK_RETRY_DELAYS_MS: '5s,10s' }), [/^WEBHOOK_RETRY_DELAYS_MS must be whole milliseconds separated by commas/])
  t.match(problemsOf({ DATABASE_URL: 'mysql://x' }), [/^DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL/])
  t.match(problemsOf({ SECRETS_KEY: 'short' }), [/^SECRETS_KEY must be 32 bytes, base64-encoded/])
  t.same(problemsOf({ PORT: 'x', LOG_LEVEL: 'loud', QUOTE_TIMEOUT_MS: '-1' }).map((p) => p.split(' ')[0]), ['PORT', 'QUOTE_TIMEOUT_MS', 'LOG_LEVEL'])
})

t.test('the five settings the README lacked are read and validated', async (t) => {
  const c = loadConfig({ WEBHOOK_TIMEOUT_MS: '2500', QUOTE_TIMEOUT_MS: '800', PROJECTION_WAIT_MS: '250', AUTH_CACHE_TTL_MS: '0', SSE_HEARTBEAT_MS: '20000' })
  t.match(c, { webhookTimeoutMs: 2500, quoteTimeoutMs: 800, projectionWaitMs: 250, authCacheTtlMs: 0, sseHeartbeatMs: 20000 })
  for (const name of ['WEBHOOK_TIMEOUT_MS', 'QUOTE_TIMEOUT_MS', 'PROJECTION_WAIT_MS', 'AUTH_CACHE_TTL_MS', 'SSE_HEARTBEAT_MS']) {
    t.match(problemsOf({ [name]: 'soon' }), [new RegExp(`^${name} must be a whole number`)], name)
  }
})

t.test('SHIPMENT_VIEW_CACHE_ENTRIES sizes the GET-by-id cache; 4000 unless set', async (t) => {
  t.equal(loadConfig({}).shipmentViewCacheEntries, 4000)
  t.equal(loadConfig({ SHIPMENT_VIEW_CACHE_ENTRIES: '250000' }).shipmentViewCacheEntries, 250_000)
  t.match(problemsOf({ SHIPMENT_VIEW_CACHE_ENTRIES: '-1' }), [/^SHIPMENT_VIEW_CACHE_ENTRIES /])
})

t.test('an unset or empty variable takes its default', async (t) => {
  const c = loadConfig({ PORT: '', LOG_LEVEL: '  ' })
  t.equal(c.port, 3000)
  t.equal(c.logLevel, 'info')
  t.same(c.webhookRetryDelaysMs, [5000, 300000, 1800000, 7200000, 18000000, 36000000, 36000000])
  t.equal(c.databaseUrl, undefined)
})

t.test('the README table is the one generated from the settings', async (t) => {
  const m = TABLE_PATTERN.exec(readFileSync(README, 'utf8'))
  t.ok(m, 'README.md has the generated section')
  t.equal(m?.[0].split('\n').slice(1, -1).join('\n'), configurationTable(), 'run `npm run docs:config` after changing src/config.ts')
})

/** Every `env.X` read in src/ outside the command line and the settings themselves. */
function variablesRead(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return name === 'cli' ? [] : variablesRead(path)
    if (!name.endsWith('.ts') || path.endsWith(join('src', 'config.ts'))) return []
    return [...readFileSync(path, 'utf8').matchAll(/\benv(?:\.|\[['"])([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]!)
  })
}

t.test('the server reads no variable the settings do not list (OpenTelemetry\'s own aside)', async (t) => {
  const unlisted = [...new Set(variablesRead(join(root, 'src')))].filter((v) => !(v in SETTINGS) && !v.startsWith('OTEL_'))
  t.same(unlisted, [])
})

t.test('npm start refuses a wrong setting with its name and rule, no stack trace', async (t) => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root, encoding: 'utf8', timeout: 30_000,
    env: { PATH: process.env.PATH, PORT: 'abc', LOG_LEVEL: 'verbose', RATE_LIMIT_PER_MINUTE: '-5', DATA_DIR: '/nonexistent/never-created' },
  })
  t.equal(r.status, 2)
  t.match(r.stderr, /PORT must be a whole number from 0 to 65535, got "abc"/)
  t.match(r.stderr, /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"/)
  t.match(r.stderr, /RATE_LIMIT_PER_MINUTE must be a whole number of at least 0, got "-5"/)
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace')
})

t.test('CORS_ORIGINS: none by default; origins separated by commas, or *; anything else refused', async (t) => {
  t.same(loadConfig({}).corsOrigins, [])
  t.same(loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' }).corsOrigins, ['https://app.example.com', 'http://localhost:5173'])
  t.same(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins, ['*'])
  for (const bad of ['app.example.com', 'https://app.example.com/', 'https://app.example.com/path', 'ftp://files.example.com', 'https://a.example.com,,https://b.example.com', '*,https://a.example.com']) {
    t.match(problemsOf({ CORS_ORIGINS: bad }), [/^CORS_ORIGINS must be origins/], bad)
  }
})

t.test('PUBLIC_BASE_URL: none by default; an absolute http(s) URL without a trailing slash', async (t) => {
  t.equal(loadConfig({}).publicBaseUrl, undefined)
  t.equal(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com' }).publicBaseUrl, 'https://api.example.com')
  t.equal(loadConfig({ PUBLIC_BASE_URL: 'http://10.0.0.5:8080/shipping' }).publicBaseUrl, 'http://10.0.0.5:8080/shipping')
  for (const bad of ['api.example.com', 'https://api.example.com/', 'https://api.example.com/shipping/', 'ftp://api.example.com', 'https://', 'https://api.example.com?x=1']) {
    t.match(problemsOf({ PUBLIC_BASE_URL: bad }), [/^PUBLIC_BASE_URL must be an absolute http\(s\) URL without a trailing slash/], bad)
  }
})

t.test('LOG_FORMAT: auto by default, json or pretty', async (t) => {
  t.equal(loadConfig({}).logFormat, 'auto')
  t.equal(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat, 'pretty')
  t.match(problemsOf({ LOG_FORMAT: 'colour' }), [/^LOG_FORMAT must be one of auto, json, pretty/])
})

t.test('ADMIN_TOKEN_FILE / SECRETS_KEY_FILE: the secret read from the file when the variable is unset', async (t) => {
  const dir = t.testdir({ token: 'adm_from_a_docker_secret_0123\n', key: `${Buffer.alloc(32, 9).toString('base64')}\n`, short: 'tiny-secret\n' })
  const c = loadConfig({ ADMIN_TOKEN_FILE: join(dir, 'token'), SECRETS_KEY_FILE: join(dir, 'key') })
  t.equal(c.adminToken, 'adm_from_a_docker_secret_0123', 'trailing newline dropped')
  t.equal(c.secretsKey, Buffer.alloc(32, 9).toString('base64'))
  t.equal(loadConfig({ ADMIN_TOKEN: 'adm_from_the_variable_xyz', ADMIN_TOKEN_FILE: join(dir, 'token') }).adminToken, 'adm_from_the_variable_xyz', 'the variable wins')
  t.match(problemsOf({ ADMIN_TOKEN_FILE: join(dir, 'missing') }), [/^ADMIN_TOKEN_FILE must be a readable file, got ".*missing" \(ENOENT\)/])
  const [problem] = problemsOf({ ADMIN_TOKEN_FILE: join(dir, 'short') })
  t.match(problem, /^ADMIN_TOKEN must be at least 16 characters, got 11 characters$/, 'checked by the variable\'s rule')
  t.notMatch(problem, /tiny-secret/, 'a secret is never echoed')
})
