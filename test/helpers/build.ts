import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { loadConfig, type Config } from '../../src/config.js'
import { createPlatform, type Platform } from '../../src/platform.js'
import { buildApp } from '../../src/http/app.js'
import type { HttpModule } from '../../src/http/module.js'
import { modules as defaultModules } from '../../src/modules.js'
import { openTestDatabase } from './test-database.js'
import type { DatabaseHandle } from '../../src/infrastructure/database/connection.js'

interface TestLike { teardown(fn: () => unknown): void }

export const ADMIN_TOKEN = 'test-admin-token'
/** The tests' notary signing key (an Ed25519 seed): no test races another to generate one into DATA_DIR. */
export const TEST_NOTARY_KEY = Buffer.alloc(32, 9).toString('base64')

export interface TestApp {
  app: FastifyInstance
  platform: Platform
  /** inject with a bearer token and JSON body. */
  call(method: string, url: string, opts?: { token?: string; body?: unknown; headers?: Record<string, string> }): Promise<LightMyRequestResponse & { json(): any }>
  admin(method: string, url: string, body?: unknown): Promise<LightMyRequestResponse>
  /** Creates an organization through the admin API; returns it and its token. */
  createOrganization(input?: Partial<{ name: string; subdomain: string; roles: string[]; currency: string; carriers_enabled: boolean; market: string }>): Promise<{ id: string; token: string; internalId: number; organization: any }>
  signContract(carrierId: string, shipperId: string): Promise<void>
}

let counter = 0

/** The tests' configuration: fixed admin token and keys, so two platforms of one test read each other's data. */
export const testConfig = (env: NodeJS.ProcessEnv = {}): Config =>
  loadConfig({ NOTARY_KEY: TEST_NOTARY_KEY, ...env, DATA_DIR: '/tmp/shipping-test-data', ADMIN_TOKEN, SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'), ALLOW_PRIVATE_URLS: 'true' })

/** The app on a fresh database of its own on the test PostgreSQL server, through `inject`; closed at teardown. */
export interface BuildAppOptions {
  /** Throwaway modules registered after the real ones (test-only routes). */
  extraModules?: HttpModule[]
  /** pino options, e.g. `{ level: 'info', stream }` to read the log lines; off by default. */
  logger?: boolean | object
  /** A database opened by the test (e.g. through a proxy that drops connections); closed at teardown. */
  database?: DatabaseHandle
}

export async function build(t: TestLike, overrides: Partial<Config> = {}, env: NodeJS.ProcessEnv = {}, appOptions: BuildAppOptions = {}): Promise<TestApp> {
  const database = appOptions.database ?? await openTestDatabase(t, { migrated: true })
  if (appOptions.database) t.teardown(() => appOptions.database!.close())
  const config = { ...testConfig(env), ...overrides }
  const platform = await createPlatform(config, { database })
  const app = await buildApp(platform, { logger: appOptions.logger ?? false, modules: [...defaultModules, ...(appOptions.extraModules ?? [])] })
  t.teardown(async () => { await app.close(); await platform.close() })
  return testApp(app, platform)
}

/** The test helpers over an app already built (closing it is the caller's). */
export function testApp(app: FastifyInstance, platform: Platform): TestApp {
  const call: TestApp['call'] = async (method, url, opts = {}) => {
    const headers: Record<string, string> = { accept: 'application/json', ...(opts.headers ?? {}) }
    if (opts.token) headers.authorization = `Bearer ${opts.token}`
    const res = await app.inject({ method: method as any, url, headers, ...(opts.body !== undefined ? { payload: opts.body as any } : {}) })
    return res as any
  }
  const admin: TestApp['admin'] = (method, url, body) => call(method, `/admin/v1${url}`, { token: ADMIN_TOKEN, body })

  return {
    app, platform, call, admin,
    async createOrganization(input = {}) {
      const n = ++counter
      const res = await admin('POST', '/organizations', {
        name: input.name ?? `Org ${n}`,
        subdomain: input.subdomain ?? `org-${process.pid}-${n}-${Math.random().toString(36).slice(2, 7)}`,
        roles: input.roles ?? ['carrier', 'shipper'],
        ...(input.currency ? { currency: input.currency } : {}),
        ...(input.carriers_enabled !== undefined ? { carriers_enabled: input.carriers_enabled } : {}),
        ...(input.market ? { market: input.market } : {}),
      })
      if (res.statusCode !== 201) throw new Error(`createOrganization: ${res.statusCode} ${res.body}`)
      const body = res.json()
      const row = await platform.rm.selectFrom('organizations').select('internal_id').where('id', '=', body.organization.id).executeTakeFirstOrThrow()
      return { id: body.organization.id, token: body.access_token, internalId: Number(row.internal_id), organization: body.organization }
    },
    async signContract(carrierId, shipperId) {
      const res = await admin('POST', '/contracts', { carrier_id: carrierId, shipper_id: shipperId })
      if (res.statusCode !== 201) throw new Error(`signContract: ${res.statusCode} ${res.body}`)
    },
  }
}
