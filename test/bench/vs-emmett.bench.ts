/**
 * Append + projection with one writer, ours beside Emmett's PostgreSQL event store in the same run
 * (issue 21's last row). One writer appends N OrganizationCreated events, each to a new stream,
 * one after another, and each must reach its read model:
 *   - ours: the platform as an API process builds it (createPlatform: the event store port, the
 *     shared tail, the projection runner with every projection), the writer waiting for the read
 *     model after each append (read-your-writes, as a command does) and, separately, appending
 *     back to back and waiting once for the last (throughput);
 *   - Emmett 0.42: getPostgreSQLEventStore with one inline raw-SQL projection (written in the
 *     append's transaction), its own package under test/bench/peers/emmett, installed on demand.
 * Rounds alternate (ours, peer, ours, peer) on fresh scratch databases; the better round of each
 * is reported. Run: bash test/bench/run-all.sh vs-emmett (or with DATABASE_URL set, through tsx).
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { loadConfig } from '../../src/config.js'
import { createPlatform } from '../../src/platform.js'
import { openDatabase } from '../../src/infrastructure/database/connection.js'
import { fmt, percentile, scratchDatabase } from './bench-database.js'

const N = Number(process.env.BENCH_EVENTS ?? 2000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
const peerDir = join(import.meta.dirname, 'peers', 'emmett')

if (!existsSync(join(peerDir, 'node_modules', '@event-driven-io', 'emmett-postgresql'))) {
  process.stderr.write('installing the peer (Emmett) under test/bench/peers/emmett …\n')
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--silent'], { cwd: peerDir, stdio: 'inherit' })
}
const peer = await import(join(peerDir, 'append-project.mjs')) as { emmettAppendAndProject(url: string, events: unknown[]): Promise<number[]> }

let internalIds = 0
const created = (tag: string, i: number) => ({
  id: `org_${tag}${i}`, internal_id: ++internalIds, name: `Organization ${i}`, subdomain: `${tag}-${i}`, roles: ['shipper'], currency: 'ARS',
  locale: 'es-AR', timezone: 'America/Argentina/Buenos_Aires', market: null, carriers_enabled: false, created_at: new Date().toISOString(),
})
const meta = () => ({ actor: { kind: 'admin' as const, id: 'bench' }, request_id: randomUUID(), occurred_at: new Date().toISOString() })
const now = () => performance.now()

interface Round { perEventMs: number[]; throughput: number }

async function ours(round: number): Promise<Round> {
  const work = mkdtempSync(join(tmpdir(), 'vs-emmett-'))
  const scratch = await scratchDatabase(`vsemmett_ours${round}`)
  const database = await openDatabase({ url: scratch.url, poolSize: 10 })
  const config = loadConfig({ DATA_DIR: join(work, 'data'), ADMIN_TOKEN: 'adm_bench_vs_emmett', SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') })
  const platform = await createPlatform(config, { database })
  const append = async (tag: string, i: number) =>
    platform.store.append(`organization-org_${tag}${i}`, [{ type: 'OrganizationCreated', data: created(tag, i), metadata: meta() }], 'no_stream')
  for (let i = 0; i < 200; i++) await platform.projections.waitFor((await append(`w${round}_`, i)).position, 5000)

  const perEventMs: number[] = []
  for (let i = 0; i < N; i++) {
    const t0 = now()
    const r = await append(`r${round}_`, i)
    if (!(await platform.projections.waitFor(r.position, 10_000))) throw new Error('projection did not catch up')
    perEventMs.push(now() - t0)
  }
  const t0 = now()
  let last = ''
  for (let i = 0; i < N; i++) last = (await append(`t${round}_`, i)).position
  if (!(await platform.projections.waitFor(last, 60_000))) throw new Error('projection did not catch up')
  const throughput = N / ((now() - t0) / 1000)
  const projected = await platform.rm.selectFrom('organizations').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()
  if (Number(projected.n) !== 2 * N + 200) throw new Error(`ours projected ${projected.n} of ${2 * N + 200}`)
  await platform.close()
  await database.close()
  await scratch.drop()
  rmSync(work, { recursive: true, force: true })
  return { perEventMs: perEventMs.sort((a, b) => a - b), throughput }
}

async function emmett(round: number): Promise<Round> {
  const scratch = await scratchDatabase(`vsemmett_peer${round}`)
  const events = (tag: string) => Array.from({ length: N }, (_, i) => ({ type: 'OrganizationCreated', data: created(tag, i) }))
  const perEventMs = (await peer.emmettAppendAndProject(scratch.url, events(`r${round}_`))).sort((a, b) => a - b)
  await scratch.drop()
  // Inline: the projection is done when the append returns, so back to back is the same loop.
  const again = await scratchDatabase(`vsemmett_peert${round}`)
  const t0 = now()
  await peer.emmettAppendAndProject(again.url, events(`t${round}_`))
  const throughput = N / ((now() - t0) / 1000)
  await again.drop()
  return { perEventMs, throughput }
}

const best = (rs: Round[]) => rs.reduce((a, b) => (percentile(a.perEventMs, 50) <= percentile(b.perEventMs, 50) ? a : b))
const oursRounds: Round[] = []
const peerRounds: Round[] = []
for (let r = 0; r < ROUNDS; r++) {
  oursRounds.push(await ours(r))
  peerRounds.push(await emmett(r))
}
const o = best(oursRounds)
const e = best(peerRounds)
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
const row = (label: string, x: Round) =>
  `  ${label.padEnd(34)}: p50 ${fmt(percentile(x.perEventMs, 50), 2)} ms  p99 ${fmt(percentile(x.perEventMs, 99), 2)} ms  = ${fmt(1000 / mean(x.perEventMs))} events/s read-your-writes;  back to back ${fmt(x.throughput)} events/s`
process.stdout.write([
  `append + projection, one writer, ${fmt(N)} events per round, best of ${ROUNDS} alternating rounds`,
  row('ours (every projection, shared tail)', o),
  row('Emmett 0.42 (one inline projection)', e),
  `  ratio ours / Emmett, read-your-writes : ${fmt(mean(e.perEventMs) / mean(o.perEventMs), 2)}×`,
  `  ratio ours / Emmett, back to back     : ${fmt(o.throughput / e.throughput, 2)}×   (goal ≥ 1.5×)`,
  '',
].join('\n'))
