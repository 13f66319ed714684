import { readdirSync, readFileSync } from 'node:fs'
import { percentile } from './bench-database.js'

/** What the stream benches print and sample, in one place so their lines read alike. */

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export const f1 = (n: number) => n.toFixed(1)

/** A process's resident memory in MB (/proc/<pid>/status). */
export const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024

/**
 * Resident memory of a process and all its descendants in MB (the platform and the embedded
 * PostgreSQL server's processes it started). Shared pages (PostgreSQL's shared buffers) count once
 * per process, so this is an upper bound.
 */
export function treeRssMb(root: number): number {
  const children = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)])
    } catch { /* exited */ }
  }
  let total = 0
  for (const stack = [root]; stack.length;) {
    const pid = stack.pop()!
    try { total += rssMb(pid) } catch { /* exited */ }
    stack.push(...(children.get(pid) ?? []))
  }
  return total
}

/** A process's resident memory sampled every 200 ms: `peak()` since the last `reset()`. */
export function rssWatch(pid: number): { peak(): number; reset(): void; stop(): void } {
  let top = rssMb(pid)
  const timer = setInterval(() => { try { top = Math.max(top, rssMb(pid)) } catch { /* exited */ } }, 200)
  return { peak: () => top, reset: () => { top = rssMb(pid) }, stop: () => clearInterval(timer) }
}

/** One line of latencies: p50, p99, max and the count. */
export function latencyLine(name: string, xs: readonly number[]): string {
  const s = [...xs].sort((a, b) => a - b)
  return `${name.padEnd(58)} p50 ${f1(percentile(s, 50)).padStart(7)} ms  p99 ${f1(percentile(s, 99)).padStart(7)} ms  max ${f1(s.at(-1) ?? NaN).padStart(7)} ms  (n=${s.length})`
}

/** What a stream bench opened, closed in the order that loses nothing: the streams, the server, the writer, the scratch database. */
export async function closeStreamBench(o: { subs: readonly { close(): void }[]; server: { stop(): Promise<unknown> }; writer: { close(): Promise<unknown> }; db: { drop(): Promise<unknown> } }): Promise<void> {
  for (const s of o.subs) s.close()
  await o.server.stop()
  await o.writer.close()
  await o.db.drop()
}

/** Runs a bench's main and exits with its outcome (the platform's pools would keep the process alive). */
export const runBench = (main: () => Promise<void>) => main().then(() => process.exit(0), (err) => { console.error(err); process.exit(1) })
