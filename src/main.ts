import type { AddressInfo } from 'node:net'
import { ConfigError, loadConfig, type Config } from './config.js'
import { createPlatform } from './platform.js'
import { carryOverIfPresent } from './cli/carry-over/pglite-carry-over.js'
import { DataDirInUse } from './infrastructure/database/embedded/embedded-server.js'
import { buildApp } from './http/app.js'
import { compileRemaining } from './http/lazy-compile.js'
import { modules } from './modules.js'
import { countrystatecityGazetteer } from './infrastructure/geo/countrystatecity-gazetteer.js'
import { startBackground } from './processes/background.js'
import { startTracing } from './infrastructure/tracing/start-tracing.js'
import { startupLine, startupSummary } from './startup-summary.js'

/** Listening on a host and port gives an AddressInfo; only a pipe gives a string. */
function portOf(address: AddressInfo | string | null): number {
  if (typeof address !== 'object' || address === null) throw new Error(`the API is not listening on a port: ${address}`)
  return address.port
}

/** `npm start`: the whole API on the embedded defaults unless the environment names real services. */
let config: Config
try {
  config = loadConfig()
} catch (err) {
  // A wrong setting is the operator's to fix: say which and why, without a stack trace.
  if (!(err instanceof ConfigError)) throw err
  process.stderr.write(`${err.message}\nSee "Configuration" in README.md.\n`)
  process.exit(2)
}
// Before anything that records spans; without OTEL_EXPORTER_OTLP_ENDPOINT it loads nothing.
const stopTracing = await startTracing()
const platform = await createPlatform(config, { carryOver: carryOverIfPresent }).catch((err: unknown) => {
  // Another platform on this DATA_DIR is the operator's to resolve; the message names it.
  if (!(err instanceof DataDirInUse)) throw err
  process.stderr.write(`${err.message}\n`)
  process.exit(2)
})
const app = await buildApp(platform, { modules })

/** Below the usual 30 s a supervisor waits after SIGTERM before SIGKILL. */
const SHUTDOWN_GRACE_MS = 25_000
let closing = false
let starting: Promise<unknown> = Promise.resolve()
// Registered before the server listens: a signal that arrives while the background is still
// starting must shut down cleanly too, not kill the process mid-start.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    if (closing) return
    closing = true
    const since = Date.now()
    app.log.info({ signal }, 'shutting down: draining requests and event streams, handing the leases over')
    // A request that never ends must not keep a stopped process around forever.
    setTimeout(() => {
      app.log.error('shutdown grace period over; exiting with requests still open')
      process.exit(1)
    }, SHUTDOWN_GRACE_MS).unref()
    // Side by side (docs/decisions.md, "SIGTERM drains"):
    // - the server stops accepting, ends its event streams with a retry hint, serves what arrives on
    //   sockets already open (with Connection: close), closes sockets as they go idle;
    // - the background gives its leases up now (relay, notary, ETA engine), so another process's
    //   standby takes them within a poll rather than after they lapse; this process's appends still
    //   reach it (append notices resume as the relay stops).
    const handedOver = starting.catch(() => undefined).then(() => platform.background?.stop())
      .then(() => app.log.info({ ms: Date.now() - since }, 'leases released'),
        (err) => app.log.error({ err }, 'stopping the background failed; its leases lapse instead'))
    await Promise.all([app.close(), handedOver])
    await platform.close()
    await stopTracing()
    app.log.info({ ms: Date.now() - since }, 'shut down')
    process.exit(0)
  })
}

// Load the gazetteer now so the first request with an address does not pay for it.
countrystatecityGazetteer().preload()
await app.listen({ port: config.port, host: config.host })
const summary = startupSummary(config, portOf(app.server.address()), platform.embeddedServer?.description)
app.log.info({ startup: summary }, startupLine(summary))
starting = startBackground(platform, app.log)
await starting
// The routes not used yet get their validators and serializers now, between requests (lazy-compile.ts).
void compileRemaining()
