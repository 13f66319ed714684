/**
 * `npm run notary`: the audit notary alone (issue 36, point 5), so that only this process holds the
 * notary key while the API processes run with NOTARY_ROLE=off. The same configuration as `npm start`
 * (it must reach the same PostgreSQL: DATABASE_URL); it seals the log, asks the witnesses, signs
 * heads, logs every standby and refusal, serves nothing, and hands its lease over on SIGTERM.
 */
import { pino } from 'pino'
import { ConfigError, loadConfig, type Config } from '../config.js'
import { createPlatform } from '../platform.js'
import { startNotary } from '../audit/start-notary.js'
import { messageOf } from '../shared/thrown.js'

async function main(): Promise<void> {
  let config: Config
  try {
    // The notary's own process: NOTARY_ROLE=off copied from the API's environment must not stop it.
    config = { ...loadConfig(), notaryRole: 'on' }
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    process.stderr.write(`${err.message}\nSee "Configuration" in README.md.\n`)
    process.exitCode = 2
    return
  }
  const logger = pino({ level: config.logLevel, base: { process: 'notary' } })
  const platform = await createPlatform(config, { startProjections: false, logger })
  const notary = startNotary(platform, logger)
  logger.info({ key: platform.notaryKey.keyId, witnesses: config.auditWitnesses || 'none' }, 'notary started: it seals while it holds the lease, else stands by')
  let stopping = false
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return
      stopping = true
      logger.info({ signal }, 'notary stopping: handing the lease over')
      void notary.stop()
        .then(() => platform.close())
        .then(() => { logger.info({}, 'notary stopped'); process.exit(0) },
          (err: unknown) => { logger.error({ err }, 'notary stop failed'); process.exit(1) })
    })
  }
}

try {
  await main()
} catch (err) {
  process.stderr.write(`notary: ${messageOf(err)}\n`)
  process.exitCode = 1
}
