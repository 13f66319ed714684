import { createPublicKey, generateKeyPairSync } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import t, { type Test } from 'tap'
import { checkAuditLog } from '../../src/audit/check.js'
import { keyIdOf } from '../../src/audit/tree-head.js'
import { readingThrough } from '../../src/infrastructure/event-store/read-through.js'
import { build, type TestApp } from '../helpers/build.js'
import { spawnCli } from '../helpers/cli-process.js'
import { dbOf, deliveredShipment, sealedToTheEnd, startTestNotary } from './fixtures.js'

// Issue 31 §4: `audit-log check` run without the server's DATA_DIR checked the heads against
// another key and called every one of them forged. The check must say which key it used and, when
// no head at all verifies, say "wrong key?" once, naming both keys.

const otherKey = () => generateKeyPairSync('ed25519')
const check = (h: TestApp, publicKey = h.platform.notaryKey.publicKey) =>
  checkAuditLog(dbOf(h), readingThrough(h.platform.store, h.platform.db, { asStored: true }), publicKey)

async function sealedLog(t: Test) {
  const h = await build(t)
  const notary = startTestNotary(t, h)
  await deliveredShipment(t, h)
  await deliveredShipment(t, h)
  await sealedToTheEnd(h)
  return { h, notary }
}

t.test('under another key: one "wrong key?" finding naming both keys, not one forgery per head', async (t) => {
  const { h } = await sealedLog(t)
  const other = otherKey().publicKey
  const report = await check(h, other)
  t.ok(report.heads >= 1, `heads were signed (${report.heads})`)
  t.equal(report.verifiedHeads, 0)
  t.equal(report.keyId, keyIdOf(other))
  t.same(report.findings.map((f) => f.kind), ['key'], 'exactly one finding, about the key')
  const [finding] = report.findings
  t.match(finding!.subject, keyIdOf(other), 'it names the key used')
  t.match(finding!.detail, /^wrong key\? none of the \d+ signed heads verifies under it/)
  t.match(finding!.detail, `signed with key ${h.platform.notaryKey.keyId}`, 'and the key the heads were signed with')

  const right = await check(h)
  t.same(right.findings, [], 'under the notary\'s own key, nothing is found')
  t.equal(right.verifiedHeads, right.heads)
})

t.test('under the right key, a head whose signature was replaced is still named as such', async (t) => {
  const { h, notary } = await sealedLog(t)
  await notary.stop()
  const heads = (await sql<{ tree_size: number }>`select tree_size::int as tree_size from audit_tree_heads order by tree_size`.execute(dbOf(h))).rows
  if (heads.length < 2) {
    // One head only: replacing its signature makes "none verifies", which is the wrong-key case above.
    await deliveredShipment(t, h)
    notary.start()
    await sealedToTheEnd(h)
    await notary.stop()
  }
  const last = (await sql<{ tree_size: number }>`select max(tree_size)::int as tree_size from audit_tree_heads`.execute(dbOf(h))).rows[0]!.tree_size
  await sql`update audit_tree_heads set signature = ${Buffer.alloc(64, 1)} where tree_size = ${last}`.execute(dbOf(h))
  const report = await check(h)
  t.same(report.findings.map((f) => [f.kind, f.subject]), [['signature', `tree head ${last}`]], 'that head only, as a bad signature')
  t.equal(report.verifiedHeads, report.heads - 1)
})

// The command line as an operator runs it beside a server, on its database.
t.test('`audit-log check` says which key it used and where it came from', async (t) => {
  const { h, notary } = await sealedLog(t)
  const dir = mkdtempSync(join(tmpdir(), 'audit-key-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const url = (h.platform.database as { url?: string }).url!
  const run = async (args: string[], env: Record<string, string>) => {
    const p = spawnCli('src/cli/audit-log.ts', args, { DATABASE_URL: url, ...env }, ['EVENTSTORE_URL', 'NOTARY_KEY', 'NOTARY_KEY_FILE', 'DATA_DIR'])
    const code = await p.exited
    return { code, out: p.stdout(), err: p.stderr() }
  }
  const serverKeyId = h.platform.notaryKey.keyId
  const wrong = otherKey().privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()
  const wrongId = keyIdOf(createPublicKey(wrong))

  const fromEnv = await run(['check'], { NOTARY_KEY: wrong, DATA_DIR: join(dir, 'empty') })
  t.equal(fromEnv.code, 1, fromEnv.out + fromEnv.err)
  t.match(fromEnv.out, new RegExp(`^notary key ${escape(wrongId)} \\(key_id\\), from NOTARY_KEY\\n`), 'the first line names the key and its source')
  t.match(fromEnv.out, new RegExp(`KEY\\s+notary key ${escape(wrongId)}: wrong key\\? none of the \\d+ signed heads verifies under it; they were signed with key ${escape(serverKeyId)}`))
  t.notMatch(fromEnv.out, /SIGNATURE/, 'no head is called forged')
  t.match(fromEnv.out, /1 problem\(s\)/)

  const keyFile = join(dir, 'notary.key')
  writeFileSync(keyFile, h.platform.config.notaryKey!)
  const fromFile = await run(['check'], { NOTARY_KEY_FILE: keyFile, DATA_DIR: join(dir, 'empty') })
  t.equal(fromFile.code, 0, fromFile.out + fromFile.err)
  t.match(fromFile.out, new RegExp(`^notary key ${escape(serverKeyId)} \\(key_id\\), from NOTARY_KEY_FILE ${escape(keyFile)}\\n`))
  t.match(fromFile.out, /(\d+) signed heads \((\d+) verify under key/)

  const dataDir = join(dir, 'data')
  mkdirSync(dataDir)
  writeFileSync(join(dataDir, 'notary-key.pem'), wrong)
  const fromDataDir = await run(['check'], { DATA_DIR: dataDir })
  t.equal(fromDataDir.code, 1)
  t.match(fromDataDir.out, new RegExp(`^notary key ${escape(wrongId)} \\(key_id\\), from DATA_DIR ${escape(join(dataDir, 'notary-key.pem'))}\\n`))
  t.match(fromDataDir.out, /wrong key\?/)

  const none = await run(['check'], { DATA_DIR: join(dir, 'empty') })
  t.equal(none.code, 0, none.out + none.err)
  t.match(none.out, /^no notary key found \(NOTARY_KEY, NOTARY_KEY_FILE, or .*notary-key\.pem\): head signatures are not checked/)

  // With no notary running, an export seals and signs first: never with a key other than the heads'.
  await notary.stop()
  const s = await deliveredShipment(t, h)
  const exported = await run(['export', '--shipment', String(s.id), '--out', join(dir, 'history.json')], { NOTARY_KEY: wrong, DATA_DIR: join(dir, 'empty') })
  t.equal(exported.code, 0, exported.out + exported.err)
  t.match(exported.err, new RegExp(`wrong key\\? the notary key ${escape(wrongId)} \\(key_id, from NOTARY_KEY\\) is not the one the heads were signed with \\(${escape(serverKeyId)}\\)`))
  const keyIds = (await sql<{ key_id: string }>`select distinct key_id from audit_tree_heads`.execute(dbOf(h))).rows.map((r) => r.key_id)
  t.same(keyIds, [serverKeyId], 'no head was signed with the other key')
})

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
}
