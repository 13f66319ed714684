import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Path of the nats-server binary, or undefined when it is not installed. */
export function natsServerBinary(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' }).trim() || undefined
  } catch {
    return undefined
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

export interface NatsServerProcess {
  url: string
  /** Kills the server (SIGKILL unless told otherwise) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>
  /** Starts it again on the same port and JetStream store. */
  start(): Promise<void>
  /** Stops it and deletes its store. */
  destroy(): Promise<void>
}

/** A private nats-server with JetStream on a free loopback port and a temporary store (for restart tests). */
export async function startNatsServer(binary = natsServerBinary()): Promise<NatsServerProcess> {
  if (!binary) throw new Error('nats-server is not installed')
  const [port, monitor] = [await freePort(), await freePort()]
  const store = mkdtempSync(join(tmpdir(), 'nats-test-'))
  let child: ChildProcess | undefined

  async function start(): Promise<void> {
    const c = spawn(binary!, ['-js', '-a', '127.0.0.1', '-p', String(port), '-m', String(monitor), '-sd', store], { stdio: 'ignore' })
    child = c
    // A test process that exits without its teardown (a timeout) must not leave the server behind.
    const killOnExit = () => { c.kill('SIGKILL') }
    process.once('exit', killOnExit)
    c.once('exit', () => process.off('exit', killOnExit))
    const deadline = Date.now() + 15_000
    for (;;) {
      try {
        const r = await fetch(`http://127.0.0.1:${monitor}/healthz?js-enabled-only=true`)
        if (r.ok) return
      } catch { /* not up yet */ }
      if (Date.now() > deadline || c.exitCode !== null) throw new Error(`nats-server did not start on port ${port}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }

  async function stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const c = child
    child = undefined
    if (!c || c.exitCode !== null || c.signalCode !== null) return
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve())
      c.kill(signal)
    })
  }

  await start()
  return {
    url: `nats://127.0.0.1:${port}`,
    stop,
    start,
    async destroy() {
      await stop('SIGTERM')
      rmSync(store, { recursive: true, force: true })
    },
  }
}
