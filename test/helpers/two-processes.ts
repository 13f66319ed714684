import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { createPlatform, type Platform } from '../../src/platform.js'
import { buildApp } from '../../src/http/app.js'
import { modules } from '../../src/modules.js'
import { startBackground } from '../../src/processes/background.js'
import { silentLogger } from '../../src/infrastructure/bus/bus.js'
import type { TestApp } from './build.js'
import { secondConnection } from './test-database.js'

interface TestLike { teardown(fn: () => unknown): void }

type Background = Awaited<ReturnType<typeof startBackground>>

export interface TwoProcesses {
  /** Random hex, also in the NATS stream's name and subject prefix (unique per test). */
  suffix: string
  /** The first process's background (its app and platform are `h`'s). */
  bg1: Background
  /** The second process: its own platform on a second connection to the same database, its app and background. */
  second: Platform
  app2: FastifyInstance
  bg2: Background
}

/**
 * Makes `h` the first of two API processes on one database and one bus (in-process, or NATS when
 * `h` was built with a NATS url), each with its background; all stopped at teardown.
 * `streamPrefix` names the NATS stream (`<PREFIX>_<suffix>`) and subjects (`<prefix><suffix>`).
 */
export async function twoProcesses(t: TestLike, h: TestApp, streamPrefix: string): Promise<TwoProcesses> {
  const suffix = randomBytes(4).toString('hex')
  const nats = { streamName: `${streamPrefix.toUpperCase()}_${suffix}`, subjectPrefix: `${streamPrefix.toLowerCase()}${suffix}` }
  const bg1 = await startBackground(h.platform, silentLogger, { nats })
  t.teardown(() => bg1.stop())
  const database = await secondConnection(t, h.platform.database as typeof h.platform.database & { url?: string })
  const second = await createPlatform(h.platform.config, { database })
  const app2 = await buildApp(second, { logger: false, modules })
  const bg2 = await startBackground(second, silentLogger, { nats })
  t.teardown(async () => { await bg2.stop(); await app2.close(); await second.close() })
  return { suffix, bg1, second, app2, bg2 }
}
