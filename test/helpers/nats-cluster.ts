import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { natsServerBinary } from './nats-server.js'

export interface ClusterNode {
  name: string
  url: string
  monitor: string
  /** True until killed. */
  readonly running: boolean
  /** kill -9 (or another signal) and wait for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>
  /** Starts it again on its ports and store (rejoins the cluster). */
  start(): Promise<void>
}

export interface NatsCluster {
  nodes: ClusterNode[]
  /** Every node's client URL, comma-separated (what NATS_URL takes). */
  urls: string
  /** The server name of the stream's leader as a live node's monitor reports it, or undefined (none yet). */
  streamLeader(stream: string): Promise<string | undefined>
  /** Waits until the cluster's JetStream meta group has a leader (streams can be created). */
  ready(timeoutMs?: number): Promise<void>
  /** Kills every node and deletes the stores. */
  destroy(): Promise<void>
}

/** `n` distinct free loopback ports (all held open at once, so distinct). */
async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = Array.from({ length: n }, () => createServer())
  const ports = await Promise.all(servers.map((s) => new Promise<number>((resolve, reject) => {
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => resolve((s.address() as { port: number }).port))
  })))
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))))
  return ports
}

const getJson = async (url: string, timeoutMs = 1000): Promise<any> => {
  const r = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) })
  if (!r.ok) throw new Error(`${url}: ${r.status}`)
  return r.json()
}

/**
 * A JetStream cluster of `size` nats-server processes on loopback (free ports, routes to each
 * other, a store each in a temporary directory), as the outage tests and the failover bench need:
 * nodes are killed and restarted by the caller. Each node's monitor port answers /jsz.
 */
export async function startNatsCluster(size = 3, binary = natsServerBinary()): Promise<NatsCluster> {
  if (!binary) throw new Error('nats-server is not installed')
  const dir = mkdtempSync(join(tmpdir(), 'nats-cluster-'))
  const ports = await freePorts(size * 3)
  const specs = Array.from({ length: size }, (_, i) => ({
    name: `n${i + 1}`, client: ports[i * 3]!, route: ports[i * 3 + 1]!, monitor: ports[i * 3 + 2]!,
  }))
  const children = new Map<string, ChildProcess>()
  const killAll = () => { for (const c of children.values()) c.kill('SIGKILL') }
  // A test process that exits without its teardown (a timeout) must not leave the servers behind.
  process.once('exit', killAll)

  const nodes: ClusterNode[] = specs.map((s) => {
    const conf = join(dir, `${s.name}.conf`)
    writeFileSync(conf, [
      `server_name: ${s.name}`,
      `listen: 127.0.0.1:${s.client}`,
      `http: 127.0.0.1:${s.monitor}`,
      `jetstream { store_dir: "${join(dir, s.name)}" }`,
      'cluster {',
      '  name: test-cluster',
      `  listen: 127.0.0.1:${s.route}`,
      `  routes: [${specs.filter((o) => o !== s).map((o) => `nats-route://127.0.0.1:${o.route}`).join(', ')}]`,
      '}',
      '',
    ].join('\n'))
    const node: ClusterNode = {
      name: s.name,
      url: `nats://127.0.0.1:${s.client}`,
      monitor: `http://127.0.0.1:${s.monitor}`,
      get running() { return children.has(s.name) },
      async kill(signal: NodeJS.Signals = 'SIGKILL') {
        const c = children.get(s.name)
        children.delete(s.name)
        if (!c || c.exitCode !== null || c.signalCode !== null) return
        await new Promise<void>((resolve) => { c.once('exit', () => resolve()); c.kill(signal) })
      },
      async start() {
        const c = spawn(binary, ['-c', conf, '-l', join(dir, `${s.name}.log`)], { stdio: 'ignore' })
        children.set(s.name, c)
        c.once('exit', () => { if (children.get(s.name) === c) children.delete(s.name) })
        const deadline = Date.now() + 15_000
        for (;;) {
          // Without a meta leader JetStream is not "enabled" yet: only the server's own health.
          if (await fetch(`${node.monitor}/healthz`, { signal: AbortSignal.timeout(1000) }).then((r) => r.ok, () => false)) return
          if (Date.now() > deadline || c.exitCode !== null) throw new Error(`nats-server ${s.name} did not start on port ${s.client}`)
          await new Promise((r) => setTimeout(r, 50))
        }
      },
    }
    return node
  })

  const live = () => nodes.filter((n) => n.running)
  const cluster: NatsCluster = {
    nodes,
    urls: nodes.map((n) => n.url).join(','),
    async streamLeader(stream) {
      for (const n of live()) {
        const jsz = await getJson(`${n.monitor}/jsz?accounts=true&streams=true`).catch(() => undefined)
        for (const account of jsz?.account_details ?? []) {
          for (const st of account.stream_detail ?? []) {
            if (st.name === stream && st.cluster?.leader) return st.cluster.leader as string
          }
        }
      }
      return undefined
    },
    async ready(timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const leaders = await Promise.all(live().map((n) => getJson(`${n.monitor}/jsz`).then((j) => j?.meta_cluster?.leader as string | undefined, () => undefined)))
        if (leaders.length > 0 && leaders.every((l) => l && l === leaders[0])) return
        if (Date.now() > deadline) throw new Error('the NATS cluster elected no JetStream meta leader')
        await new Promise((r) => setTimeout(r, 100))
      }
    },
    async destroy() {
      await Promise.all(nodes.map((n) => n.kill('SIGKILL')))
      process.off('exit', killAll)
      rmSync(dir, { recursive: true, force: true })
    },
  }
  try {
    await Promise.all(nodes.map((n) => n.start()))
  } catch (err) {
    await cluster.destroy()
    throw err
  }
  return cluster
}
