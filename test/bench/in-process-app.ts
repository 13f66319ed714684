import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/config.js'
import { createPlatform } from '../../src/platform.js'
import { buildApp } from '../../src/http/app.js'
import { modules } from '../../src/modules.js'
import { openDatabase } from '../../src/infrastructure/database/connection.js'
import { scratchDatabase } from './bench-database.js'

export const BENCH_ADMIN_TOKEN = 'adm_bench_in_process'

/**
 * An API process's platform and app on a scratch PostgreSQL database, served through `inject`
 * (server time without a socket); `call` times each request; `carrier()` makes a carrier
 * organization and answers its token. The rate limit is lifted: benches measure, not throttle.
 */
export async function inProcessApp(tag: string) {
  const work = mkdtempSync(join(tmpdir(), `${tag}-bench-`))
  const db = await scratchDatabase(tag.replace(/\W/g, ''))
  const database = await openDatabase({ url: db.url, poolSize: 10 })
  const config = loadConfig({ DATA_DIR: join(work, 'data'), ADMIN_TOKEN: BENCH_ADMIN_TOKEN, SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'), RATE_LIMIT_PER_MINUTE: '100000000' })
  const platform = await createPlatform(config, { database })
  const app = await buildApp(platform, { logger: false, modules })
  const call = async (method: string, url: string, token: string, body?: unknown) => {
    const t0 = process.hrtime.bigint()
    const res = await app.inject({ method: method as 'POST', url, headers: { authorization: `Bearer ${token}`, accept: 'application/json' }, ...(body !== undefined ? { payload: body as object } : {}) })
    return { status: res.statusCode, body: res.body, ms: Number(process.hrtime.bigint() - t0) / 1e6 }
  }
  const carrier = async (name: string): Promise<string> => {
    const org = await call('POST', '/admin/v1/organizations', BENCH_ADMIN_TOKEN, { name, subdomain: `${tag}-${Date.now()}`, roles: ['carrier'] })
    if (org.status !== 201) throw new Error(`organization: ${org.body}`)
    return JSON.parse(org.body).access_token as string
  }
  const close = async () => {
    await app.close()
    await platform.close()
    await db.drop()
    rmSync(work, { recursive: true, force: true })
  }
  return { app, platform, call, carrier, close }
}
