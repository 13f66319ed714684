import { sql } from 'kysely'
import t from 'tap'
import { rootOf } from '../../src/audit/merkle.js'
import { sealedLeafHash } from '../../src/audit/stored-leaf.js'
import { verifyConsistency, verifyInclusion } from '../../src/audit/merkle-verify.js'
import { consistencyProof, inclusionProofs } from '../../src/audit/proofs.js'
import { treeHeadSignatureHolds } from '../../src/audit/tree-head.js'
import { allHeads, leavesFrom } from '../../src/audit/tree-store.js'
import { readingThrough } from '../../src/infrastructure/event-store/read-through.js'
import { build, type TestApp } from '../helpers/build.js'
import { readAllVisible } from '../helpers/read-all-visible.js'
import { dbOf, deliveredShipment, eventCount, sealedToTheEnd, startTestNotary } from './fixtures.js'

/** The leaf hash of every event of the log as stored (leaf version 2: the stored bytes), in commit order. */
async function expectedLeaves(h: TestApp): Promise<Buffer[]> {
  const stored = readingThrough(h.platform.store, h.platform.db, { asStored: true })
  const events = await readAllVisible(stored, () => true, await eventCount(h))
  return events.map((e) => sealedLeafHash(e))
}

t.test('the notary seals every event in commit order; every proof from the stored tree holds against its signed heads', async (t) => {
  const h = await build(t)
  const notary = startTestNotary(t, h, { signEveryEvents: 7 })
  await deliveredShipment(t, h)
  await deliveredShipment(t, h)
  const n = await sealedToTheEnd(h)
  t.ok(notary.isActive, 'it holds the lease')
  const leaves = await leavesFrom(dbOf(h), 0, 100_000)
  t.same(leaves.map((l) => l.leafIndex), [...Array(n).keys()], 'one leaf per event, no gap')
  t.same(leaves.map((l) => l.leafHash.toString('hex')), (await expectedLeaves(h)).map((x) => x.toString('hex')), 'each leaf is the sealed record of the event at its rank in commit order')

  const heads = await allHeads(dbOf(h))
  t.ok(heads.length >= 3, `heads were signed as the log grew (${heads.map((x) => x.treeSize).join(', ')})`)
  for (const head of heads) {
    t.ok(treeHeadSignatureHolds(head, head.signature, h.platform.notaryKey.publicKey), `head ${head.treeSize}: signature holds`)
    t.same(head.rootHash, rootOf(leaves.slice(0, head.treeSize).map((l) => l.leafHash)), `head ${head.treeSize}: root of its prefix`)
  }
  const last = heads[heads.length - 1]!
  const paths = await inclusionProofs(dbOf(h), leaves.map((l) => l.leafIndex), last.treeSize)
  t.equal(leaves.filter((l, i) => verifyInclusion(l.leafIndex, last.treeSize, l.leafHash, paths[i]!, last.rootHash) === undefined).length, n, 'every leaf\'s inclusion proof holds')
  t.ok(paths.every((p) => p.length <= Math.ceil(Math.log2(n))), 'proofs of at most ⌈log2 n⌉ hashes')
  for (const a of heads) {
    for (const b of heads) {
      if (a.treeSize > b.treeSize) continue
      const proof = await consistencyProof(dbOf(h), a.treeSize, b.treeSize)
      if (verifyConsistency(a.treeSize, b.treeSize, proof, a.rootHash, b.rootHash) !== undefined) t.fail(`consistency ${a.treeSize} → ${b.treeSize}`)
    }
  }
  const nodes = (await sql<{ n: number }>`select count(*)::int as n from audit_tree_nodes`.execute(dbOf(h))).rows[0]!.n
  t.equal(nodes, n - [...n.toString(2)].filter((d) => d === '1').length, 'every complete subtree above the leaves is stored once')
})

t.test('one notary seals at a time; when its owner dies another takes over within the lease, and a restart changes no leaf', async (t) => {
  const h = await build(t)
  const first = startTestNotary(t, h, { leaseMs: 1500 })
  const second = startTestNotary(t, h, { leaseMs: 1500 })
  await deliveredShipment(t, h)
  const before = await sealedToTheEnd(h)
  t.equal([first, second].filter((x) => x.isActive).length, 1, 'exactly one holds the lease')
  const [active, standby] = first.isActive ? [first, second] : [second, first]
  const sealedBefore = await leavesFrom(dbOf(h), 0, 100_000)

  // Its process dies: the lease is not given back, it lapses.
  await active.stop({ keepLease: true })
  const died = Date.now()
  await deliveredShipment(t, h)
  await sealedToTheEnd(h)
  const took = Date.now() - died
  t.ok(standby.isActive, 'the standby took over')
  t.ok(took < 3000 + 1000, `within the lease and a renewal (${took} ms)`)
  const after = await leavesFrom(dbOf(h), 0, 100_000)
  t.same(after.slice(0, before), sealedBefore, 'the leaves sealed before are unchanged')
  t.same(after.map((l) => l.leafHash.toString('hex')), (await expectedLeaves(h)).map((x) => x.toString('hex')), 'and the new owner went on from where the first stopped, no event twice or skipped')

  // A restart: a fresh notary (a new owner) on the same tables goes on from the stored tree.
  await standby.stop()
  const restarted = startTestNotary(t, h)
  await deliveredShipment(t, h)
  await sealedToTheEnd(h)
  t.ok(restarted.isActive)
  const again = await leavesFrom(dbOf(h), 0, 100_000)
  t.same(again.slice(0, after.length), after, 'a restart changes no leaf')
  t.same(again.map((l) => l.leafHash.toString('hex')), (await expectedLeaves(h)).map((x) => x.toString('hex')))
  const heads = await allHeads(dbOf(h))
  t.same(heads[heads.length - 1]!.rootHash, rootOf(again.map((l) => l.leafHash)))
})
