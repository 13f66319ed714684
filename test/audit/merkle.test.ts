import t from 'tap'
import {
  CompactRange, consistencyRanges, emptyRoot, hashChildren, hashLeaf, inclusionRanges, type NodeId, rangeHash, rootOf,
} from '../../src/audit/merkle.js'
import { verifyConsistency, verifyInclusion } from '../../src/audit/merkle-verify.js'
import { leafBytes, leafHashOf } from '../../src/audit/leaf.js'

// The published RFC 6962 / RFC 9162 test vectors of transparency-dev/merkle (testonly/constants.go
// and proof/verify_test.go): eight leaf inputs, the hash of every complete subtree, the root of
// every prefix, and known inclusion and consistency proofs (their leaf numbers are 1-based).
const h = (hex: string) => Buffer.from(hex, 'hex')
const LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(h)
const NODES = [
  ['6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d', '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
    '0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7', '07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7',
    'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b', '4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658',
    'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f', '46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1'],
  ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125', '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
    '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a', 'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0'],
  ['d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7', '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4'],
  ['5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328'],
].map((level) => level.map(h))
const ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d', 'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77', 'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4', '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c', '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
].map(h)
const INCLUSION: [leaf: number, size: number, proof: string[]][] = [
  [1, 8, ['96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7', '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4']],
  [6, 8, ['bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b', 'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0', 'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7']],
  [3, 3, ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125']],
  [2, 5, ['6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d', '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', 'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b']],
  [1, 1, []],
]
const CONSISTENCY: [first: number, second: number, proof: string[]][] = [
  [1, 1, []],
  [1, 8, ['96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7', '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4']],
  [6, 8, ['0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a', 'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0', 'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7']],
  [2, 5, ['5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', 'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b']],
  [6, 7, ['0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a', 'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f', 'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7']],
]

/** Node hashes of a tree kept whole in memory: what the notary's table holds. */
function nodeTable(leafHashes: Buffer[]): (node: NodeId) => Buffer {
  const levels: Buffer[][] = [leafHashes]
  while (levels[levels.length - 1]!.length > 1) {
    const below = levels[levels.length - 1]!
    const level: Buffer[] = []
    for (let i = 0; i + 1 < below.length; i += 2) level.push(hashChildren(below[i]!, below[i + 1]!))
    levels.push(level)
  }
  return ({ level, index }) => {
    const hash = levels[level]?.[index]
    if (!hash) throw new Error(`no complete subtree ${level}/${index}`)
    return hash
  }
}

const leafHashes = LEAVES.map(hashLeaf)
const nodes = nodeTable(leafHashes)
const inclusionProof = (index: number, size: number) => inclusionRanges(index, size).map((r) => rangeHash(r, nodes))
const consistencyProof = (first: number, second: number) => consistencyRanges(first, second).map((r) => rangeHash(r, nodes))

t.test('leaf hashes, every complete subtree and every prefix root match the published vectors', async (t) => {
  t.same(emptyRoot(), ROOTS[0])
  NODES.forEach((level, l) => level.forEach((hash, i) => t.same(nodes({ level: l, index: i }), hash, `node ${l}/${i}`)))
  for (let size = 0; size <= 8; size++) t.same(rootOf(leafHashes.slice(0, size)), ROOTS[size], `root of ${size}`)
  const range = CompactRange.empty()
  const completed: string[] = []
  leafHashes.forEach((lh) => range.append(lh, (n, hash) => { completed.push(`${n.level}/${n.index}`); t.same(hash, NODES[n.level]![n.index]) }))
  t.same(range.root(), ROOTS[8])
  t.same(completed, ['1/0', '1/1', '2/0', '1/2', '1/3', '2/1', '3/0'], 'the compact range reports each interior node once, when complete')
})

t.test('inclusion proofs: generated as published, verified, and every corruption refused', async (t) => {
  for (const [leaf, size, published] of INCLUSION) {
    const index = leaf - 1
    const proof = inclusionProof(index, size)
    t.same(proof.map((p) => p.toString('hex')), published, `proof of leaf ${index} in ${size}`)
    t.equal(verifyInclusion(index, size, leafHashes[index]!, proof, ROOTS[size]!), undefined)
    const wrong: [string, number, number, Buffer, Buffer[], Buffer][] = [
      ['index - 1', index - 1, size, leafHashes[index]!, proof, ROOTS[size]!],
      ['index + 1', index + 1, size, leafHashes[index]!, proof, ROOTS[size]!],
      ['index ^ 2', index ^ 2, size, leafHashes[index]!, proof, ROOTS[size]!],
      ['size * 2', index, size * 2, leafHashes[index]!, proof, ROOTS[size]!],
      ['size / 2', index, Math.floor(size / 2), leafHashes[index]!, proof, ROOTS[size]!],
      ['wrong leaf', index, size, hashLeaf(Buffer.from('WrongLeaf')), proof, ROOTS[size]!],
      ['empty root', index, size, leafHashes[index]!, proof, ROOTS[0]!],
      ['trailing root', index, size, leafHashes[index]!, [...proof, ROOTS[size]!], ROOTS[size]!],
      ['preceding root', index, size, leafHashes[index]!, [ROOTS[size]!, ...proof], ROOTS[size]!],
      ['trailing garbage', index, size, leafHashes[index]!, [...proof, Buffer.alloc(0)], ROOTS[size]!],
      ...proof.map((_, i): [string, number, number, Buffer, Buffer[], Buffer] => {
        const flipped = proof.map((p) => Buffer.from(p))
        flipped[i]![0]! ^= 8
        return [`bit flipped in proof[${i}]`, index, size, leafHashes[index]!, flipped, ROOTS[size]!]
      }),
      ...(proof.length > 0 ? [['removed component', index, size, leafHashes[index]!, proof.slice(0, -1), ROOTS[size]!] as [string, number, number, Buffer, Buffer[], Buffer]] : []),
    ]
    for (const [what, i, s, lh, p, root] of wrong) t.type(verifyInclusion(i, s, lh, p, root), 'string', `leaf ${index} of ${size}: ${what} refused`)
  }
})

t.test('consistency proofs: generated as published, verified, and every corruption refused', async (t) => {
  for (const [first, second, published] of CONSISTENCY) {
    const proof = consistencyProof(first, second)
    t.same(proof.map((p) => p.toString('hex')), published, `proof ${first} → ${second}`)
    t.equal(verifyConsistency(first, second, proof, ROOTS[first]!, ROOTS[second]!), undefined)
    if (proof.length === 0) continue
    const wrong: [string, number, number, Buffer[], Buffer, Buffer][] = [
      ['first - 1', first - 1, second, proof, ROOTS[first]!, ROOTS[second]!],
      ['first + 1', first + 1, second, proof, ROOTS[first]!, ROOTS[second]!],
      ['first ^ 2', first ^ 2, second, proof, ROOTS[first]!, ROOTS[second]!],
      ['second * 2', first, second * 2, proof, ROOTS[first]!, ROOTS[second]!],
      ['second / 2', first, Math.floor(second / 2), proof, ROOTS[first]!, ROOTS[second]!],
      ['swapped roots', first, second, proof, ROOTS[second]!, ROOTS[first]!],
      ['empty proof', first, second, [], ROOTS[first]!, ROOTS[second]!],
      ['truncated', first, second, proof.slice(0, -1), ROOTS[first]!, ROOTS[second]!],
      ['trailing root', first, second, [...proof, ROOTS[second]!], ROOTS[first]!, ROOTS[second]!],
      ['preceding proof[0]', first, second, [proof[0]!, ...proof], ROOTS[first]!, ROOTS[second]!],
      ...proof.map((_, i): [string, number, number, Buffer[], Buffer, Buffer] => {
        const flipped = proof.map((p) => Buffer.from(p))
        flipped[i]![0]! ^= 16
        return [`bit flipped in proof[${i}]`, first, second, flipped, ROOTS[first]!, ROOTS[second]!]
      }),
    ]
    for (const [what, a, b, p, ra, rb] of wrong) t.type(verifyConsistency(a, b, p, ra, rb), 'string', `${first} → ${second}: ${what} refused`)
  }
  t.equal(verifyConsistency(0, 5, [], ROOTS[0]!, ROOTS[5]!), undefined, 'the empty tree is a prefix of any')
  t.type(verifyConsistency(5, 2, [], ROOTS[5]!, ROOTS[2]!), 'string', 'time travel to the past is refused')
  t.type(verifyConsistency(3, 3, [], ROOTS[3]!, ROOTS[4]!), 'string', 'one size, two roots')
})

t.test('every proof of every tree up to 70 leaves verifies, with at most ⌈log2 n⌉ hashes', async (t) => {
  const many = Array.from({ length: 70 }, (_, i) => hashLeaf(Buffer.from(`leaf ${i}`)))
  const table = nodeTable(many)
  let checked = 0
  for (let size = 1; size <= many.length; size++) {
    const root = rootOf(many.slice(0, size))
    const depth = Math.ceil(Math.log2(size))
    for (let i = 0; i < size; i++) {
      const proof = inclusionRanges(i, size).map((r) => rangeHash(r, table))
      if (proof.length > depth || verifyInclusion(i, size, many[i]!, proof, root) !== undefined) t.fail(`leaf ${i} of ${size}`)
      checked++
    }
    for (let first = 0; first <= size; first++) {
      const proof = consistencyRanges(first, size).map((r) => rangeHash(r, table))
      if (verifyConsistency(first, size, proof, rootOf(many.slice(0, first)), root) !== undefined) t.fail(`${first} → ${size}`)
      checked++
    }
  }
  t.equal(checked, 70 * 71 / 2 + (71 * 72 / 2 - 1), 'all checked')
})

t.test('a leaf is SHA-256 of 0x00 and the sealed record as RFC 8785 JSON', async (t) => {
  const record = {
    stream_id: 'shipment-7', stream_version: 2, event_id: '0B6F5C2E-0000-4000-8000-000000000001', type: 'StatusReported', schema_version: 1,
    data: { status: 'delivered', b: [1, 2.5, -0, 1e21, 'é'], a: null, '10': true, '2': false }, metadata: { occurred_at: '2026-11-26T10:00:00.000Z', actor: { kind: 'carrier', id: 'car_1' } },
    recorded_at: '2026-11-26T10:00:00.123Z',
  }
  const text = '{"data":{"10":true,"2":false,"a":null,"b":[1,2.5,0,1e+21,"é"],"status":"delivered"},"event_id":"0b6f5c2e-0000-4000-8000-000000000001",'
    + '"metadata":{"actor":{"id":"car_1","kind":"carrier"},"occurred_at":"2026-11-26T10:00:00.000Z"},"recorded_at":"2026-11-26T10:00:00.123Z",'
    + '"schema_version":1,"stream_id":"shipment-7","stream_version":2,"type":"StatusReported"}'
  t.equal(leafBytes(record).toString('utf8'), text, 'keys sorted by code unit at every level, numbers and strings as RFC 8785 writes them')
  t.same(leafHashOf(record), hashLeaf(Buffer.from(text, 'utf8')))
  t.not(leafHashOf({ ...record, recorded_at: '2026-11-26T10:00:00.124Z' }).toString('hex'), leafHashOf(record).toString('hex'), 'the time is sealed')
})
