import { generateKeyPairSync } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import t, { type Test } from 'tap'
import { cosignerVkey, logVkey } from '../../src/audit/checkpoint-note.js'
import { notaryKeyFrom } from '../../src/audit/tree-head.js'
import { startWitness } from '../../src/audit/witness/witness-server.js'
import { startApiProcess } from '../helpers/api-process.js'
import { build, TEST_NOTARY_KEY } from '../helpers/build.js'
import { spawnCli } from '../helpers/cli-process.js'
import { openTestDatabase } from '../helpers/test-database.js'
import { dbOf, deliveredShipment, eventCount, sealedToTheEnd } from './fixtures.js'

// Issue 36, point 5: only one process holds the notary key. The API process runs with
// NOTARY_ROLE=off (no notary, no key generated), `npm run notary` seals alone; and the witnesses'
// answers to a notary show in its process's /metrics and /ready.

const ORIGIN = 'shipping.test/audit'
const AUDIT_TABLES = ['audit_leaves', 'audit_tree_nodes', 'audit_tree_heads', 'audit_notary', 'audit_checkpoints']

async function until<T>(what: string, probe: () => Promise<T | undefined>, last: () => string = () => '', timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const v = await probe()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${last()}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const tempDir = (t: Test, name: string) => {
  const dir = mkdtempSync(join(tmpdir(), name))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const leaves = async (h: { platform: { db: unknown } }) =>
  (await sql<{ n: number }>`select count(*)::int as n from audit_leaves`.execute(dbOf(h as any))).rows[0]!.n

const readyNotary = async (url: string) => (await (await fetch(`${url}/ready`)).json() as any).checks.notary

t.test('NOTARY_ROLE=off: the API process seals nothing and makes no key; `npm run notary` seals alone and stops on SIGTERM', async (t) => {
  const database = await openTestDatabase(t, { migrated: true })
  const h = await build(t, {}, {}, { database })
  const dataDir = tempDir(t, 'notary-role-api-')
  const api = await startApiProcess({
    DATABASE_URL: database.url, DATA_DIR: dataDir, NOTARY_ROLE: 'off', AUDIT_READY_LAG_SECONDS: '1', NOTARY_KEY: '', NOTARY_KEY_FILE: '',
  }, { teardown: (fn) => t.teardown(fn) })
  t.teardown(() => api.stop())
  await deliveredShipment(t, h)
  const n = await eventCount(h)
  t.ok(n >= 5, `${n} events written`)

  // The lag alarm is how one sees "nobody seals": it turns once the oldest event waited 1 s.
  const degraded = await until('/ready degraded: nobody seals', async () => {
    const c = await readyNotary(api.url)
    return c.status === 'degraded' ? c : undefined
  }, api.output)
  t.match(degraded.message, /no notary holds the lease/, 'no process holds the lease')
  t.equal(await leaves(h), 0, 'the API process sealed nothing')
  t.notOk(existsSync(join(dataDir, 'notary-key.pem')), `no notary key generated in DATA_DIR (it holds ${readdirSync(dataDir).join(', ')})`)
  const key = await fetch(`${api.url}/audit/v1/public-key`)
  t.equal(key.status, 503, 'the public key is not served by a process without the key')
  t.match(await key.text(), /NOTARY_ROLE=off/)
  t.equal((await fetch(`${api.url}/audit/v1/tree-heads/latest`)).status, 404, 'the read endpoints answer from the tables: no head yet')

  const notaryDir = tempDir(t, 'notary-role-notary-')
  const notary = spawnCli('src/cli/notary.ts', [], {
    DATABASE_URL: database.url, DATA_DIR: notaryDir, NOTARY_KEY: TEST_NOTARY_KEY, NOTARY_ROLE: 'off', NOTARY_SIGN_INTERVAL_MS: '100', LOG_FORMAT: 'json',
  }, ['DATABASE_URL', 'DATA_DIR', 'NOTARY_KEY_FILE'])
  t.teardown(() => { if (notary.child.exitCode === null) notary.child.kill('SIGKILL') })
  const sealed = await sealedToTheEnd(h, 60_000).catch((err: Error) => { throw new Error(`${err.message}\n${notary.stdout()}${notary.stderr()}`) })
  t.ok(sealed >= n, `npm run notary sealed ${sealed} leaves`)
  const head = await (await fetch(`${api.url}/audit/v1/tree-heads/latest`)).json() as any
  t.equal(head.tree_size, sealed, 'the API process serves the head the notary signed')
  t.equal(head.key_id, notaryKeyFrom(TEST_NOTARY_KEY).keyId, 'signed with the notary process\'s key')
  await until('/ready ok again', async () => ((await readyNotary(api.url)).status === 'ok' ? true : undefined), api.output)
  t.match(notary.stdout(), /notary started/)

  notary.child.kill('SIGTERM')
  t.equal(await notary.exited, 0, 'SIGTERM: a clean exit')
  t.match(notary.stdout(), /notary stopped/)
  const lease = (await sql<{ live: boolean }>`select coalesce(lease_until > clock_timestamp(), false) as live from audit_notary`.execute(dbOf(h))).rows[0]
  t.equal(lease?.live, false, 'the lease was handed over, not left to lapse')
})

t.test('the witnesses\' answers in /metrics, and a witness refusal degrades /ready with its reason', async (t) => {
  const database = await openTestDatabase(t, { migrated: true })
  const h = await build(t, { auditOrigin: ORIGIN }, {}, { database })
  const dir = tempDir(t, 'notary-role-witness-')
  const wkey = { name: 'carrier.test/witness', privateKey: generateKeyPairSync('ed25519').privateKey }
  const witness = await startWitness({ key: wkey, stateFile: join(dir, 'witness.json'), logs: [logVkey(ORIGIN, h.platform.notaryKey.publicKey)], port: 0, log: () => undefined })
  t.teardown(() => witness.close())
  const api = await startApiProcess({
    DATABASE_URL: database.url, DATA_DIR: join(dir, 'data'), NOTARY_KEY: TEST_NOTARY_KEY, AUDIT_ORIGIN: ORIGIN,
    AUDIT_WITNESSES: `${cosignerVkey(wkey)}@${witness.url}`, NOTARY_SIGN_INTERVAL_MS: '100', AUDIT_READY_LAG_SECONDS: '300',
  }, { teardown: (fn) => t.teardown(fn) })
  t.teardown(() => api.stop())
  const a = await deliveredShipment(t, h)
  const n = await sealedToTheEnd(h, 60_000)

  const gauge = (metrics: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1])
  const metrics = await until('the witness gauges', async () => {
    const m = await (await fetch(`${api.url}/metrics`)).text()
    return gauge(m, 'audit_witness_cosigned_size') === n ? m : undefined
  }, api.output)
  t.equal(gauge(metrics, 'audit_witness_cosigned_size'), witness.state().logs[ORIGIN]!.size, 'the size the witness holds')
  t.ok(gauge(metrics, 'audit_witness_round_trip_seconds') > 0, 'a round trip measured')
  t.equal(gauge(metrics, 'audit_witness_refused'), 0)
  t.equal(gauge(metrics, 'audit_witness_unavailable'), 0)
  t.match(metrics, /# HELP audit_witness_cosigned_size /)
  t.equal(gauge(metrics, 'audit_notary_sealed_size'), n, 'beside the notary\'s own gauges')
  const ok = await readyNotary(api.url)
  t.equal(ok.status, 'ok')
  t.equal(ok.witness_cosigned_size, n)

  // A database writer edits an event and drops the audit tables: the notary re-seals a tree the
  // witnesses cosigned otherwise, and refuses; /ready says so at once, without waiting for the lag.
  await sql`update es_events set data = data || jsonb_build_object('status', 'returned') where stream_id = ${a.stream} and stream_version = 5`.execute(dbOf(h))
  for (const table of AUDIT_TABLES) await sql`delete from ${sql.table(table)}`.execute(dbOf(h))
  const refused = await until('/ready degraded by the refusal', async () => {
    const c = await readyNotary(api.url)
    return c.status === 'degraded' ? c : undefined
  }, api.output)
  t.match(refused.message, /a witness refuses this tree, so the notary signs nothing: /)
  t.match(refused.witness_refused, /rewritten|rolled back|split view|does not extend/)
  const after = await (await fetch(`${api.url}/metrics`)).text()
  t.equal(gauge(after, 'audit_witness_refused'), 1, 'audit_witness_refused')
})
