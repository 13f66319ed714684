import t from 'tap'
import { cosignatureLine, cosignatureTimestamp, cosignaturesBy, cosignerVerifierKey, logVerifierKey, openCheckpoint, parseCheckpointText, signCheckpoint } from '../../src/audit/checkpoint-note.js'
import {
  ALG_COSIGNATURE_V1, ALG_ED25519, formatVerifierKey, openNote, parseNote, parseVerifierKey, privateKeyOfSeed, signNote,
} from '../../src/audit/signed-note.js'
import { parseAddCheckpoint } from '../../src/audit/witness/witness-server.js'
import { createPublicKey, generateKeyPairSync } from 'node:crypto'
import { build } from '../helpers/build.js'
import { deliveredShipment, sealedToTheEnd, startTestNotary } from './fixtures.js'

// The note format against an existing implementation: the vectors of golang.org/x/mod/sumdb/note
// (note_test.go: TestNewVerifier, TestSign, TestOpen) and of transparency-dev/formats
// (note/note_cosigv1_test.go: a witness's 0x04 vkey and a cosignature's timestamp), byte for byte.
const PETER_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'
const PETER_SKEY = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz'
const ENOCH_VKEY = 'EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop'
const TEXT = 'If you think cryptography is the answer to your problem,\nthen you don\'t know what your problem is.\n'
const PETER_SIG = '— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n'
const ENOCH_SIG = '— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n'

const peterSeed = () => {
  const material = Buffer.from(PETER_SKEY.split('+').slice(4).join('+'), 'base64')
  t.equal(material[0], ALG_ED25519)
  return material.subarray(1)
}

t.test('our signer gives Go\'s note, byte for byte, and our vkey is Go\'s', async (t) => {
  const privateKey = privateKeyOfSeed(peterSeed())
  t.equal(formatVerifierKey('PeterNeumann', ALG_ED25519, createPublicKey(privateKey)), PETER_VKEY, 'the vkey of the skey\'s public key')
  t.equal(signNote(TEXT, 'PeterNeumann', privateKey), `${TEXT}\n${PETER_SIG}`, 'the signed note of TestSign')
})

t.test('our verifier accepts Go\'s notes and refuses what Go\'s refuses', async (t) => {
  const peter = parseVerifierKey(PETER_VKEY)
  const enoch = parseVerifierKey(ENOCH_VKEY)
  t.equal(peter.hash, 0xc74f20a3)
  t.equal(openNote(`${TEXT}\n${PETER_SIG}${ENOCH_SIG}`, peter), TEXT, 'one verified signature among two')
  t.equal(openNote(`${TEXT}\n${PETER_SIG}${ENOCH_SIG}`, enoch), TEXT, 'the other one')
  t.throws(() => openNote(`${TEXT}\n${PETER_SIG.slice(0, 60)}ABCD${PETER_SIG.slice(60)}`, peter), /does not verify/, 'an invalid signature')
  t.throws(() => openNote(`${TEXT}\n${ENOCH_SIG}`, peter), /no signature of PeterNeumann/)
  const badMsgs = [TEXT, `${TEXT}\n`, `${TEXT}\n${PETER_SIG.slice(0, -1)}`, `\x01${TEXT}\n${PETER_SIG}`,
    `${TEXT}\n— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=`, `${TEXT}\n${PETER_SIG}Unexpected line.\n`]
  for (const msg of badMsgs) t.throws(() => parseNote(msg), /^malformed note/, `malformed: ${JSON.stringify(msg.slice(-30))}`)
  // TestNewVerifier's manglings: a wrong length with adjusted hash, an unknown algorithm, any byte changed.
  t.throws(() => parseVerifierKey('PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY=='))
  t.throws(() => parseVerifierKey('PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'))
  let refused = 0
  for (let i = 0; i < PETER_VKEY.length; i++) {
    const b = Buffer.from(PETER_VKEY)
    b[i]!++
    try { parseVerifierKey(b.toString()) } catch { refused++ }
  }
  t.equal(refused, PETER_VKEY.length, 'every one-byte change of the vkey is refused')
})

t.test('cosignature keys (0x04) and timestamps as transparency-dev/formats reads them', async (t) => {
  const remora = parseVerifierKey('remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2', [ALG_COSIGNATURE_V1])
  t.equal(remora.alg, ALG_COSIGNATURE_V1, 'a running witness\'s vkey: its hash is SHA-256(name \\n 0x04 key)')
  t.throws(() => parseVerifierKey('remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2'), /type/, 'not taken for a log key')
  const sig = Buffer.from('ZGhGuQAAAABm/qTPeyKXD+R2rzyQsxPiP8mXum7qq/iF0u4vanlqJyocWODBt97w9uL+8qT7S5gxEHWWOworDcFiEBYJXORmnFBOBA==', 'base64')
  t.equal(cosignatureTimestamp(sig.subarray(4)), 1727964367)
  t.equal(cosignatureTimestamp(Buffer.from('eQjRQm6eSKzFoiYalgwCPXu2y3ijtg68is9M46JKxuZB+dRfTmeQeDBoXnvxZx2ugnkyV+MUMLXpWs1hPb/W/4xkNQY=', 'base64').subarray(4)), undefined, 'a plain note signature is no cosignature')

  const witness = { name: 'witness.example/w1', privateKey: generateKeyPairSync('ed25519').privateKey }
  const log = generateKeyPairSync('ed25519')
  const note = signCheckpoint({ origin: 'example.com/log', size: 7, rootHash: Buffer.alloc(32, 3) }, log.privateKey)
  const line = cosignatureLine(parseNote(note).text, witness, 1700000000)
  const wkey = cosignerVerifierKey(witness.name, createPublicKey(witness.privateKey))
  t.same(cosignaturesBy(parseNote(note + line), wkey).map((c) => c.timestamp), [1700000000])
  t.same(cosignaturesBy(parseNote(note.replace('\n7\n', '\n8\n') + line), wkey), [], 'over another checkpoint it does not hold')
  t.ok(openCheckpoint(note + line, logVerifierKey('example.com/log', log.publicKey)), 'the log signature still opens with the cosignature added')
})

t.test('the checkpoint body and the tlog-witness request of the C2SP examples parse', async (t) => {
  t.same(parseCheckpointText('example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n').size, 20852163)
  t.throws(() => parseCheckpointText('example.com/x\n012\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n'), /decimal/)
  const body = 'old 20852014\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\njrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=\n\nexample.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n'
  const parsed = parseAddCheckpoint(body)
  t.equal(parsed.oldSize, 20852014)
  t.equal(parsed.proof.length, 2)
  t.equal(parseNote(parsed.note).signatures[0]!.name, 'example.com/behind-the-sofa')
})

t.test('GET /audit/v1/checkpoint: the latest head as a checkpoint the published key opens', async (t) => {
  const h = await build(t, { auditOrigin: 'shipping.test/audit' })
  startTestNotary(t, h)
  await deliveredShipment(t, h)
  await sealedToTheEnd(h)
  const key = await h.call('GET', '/audit/v1/checkpoint/key')
  t.equal(key.statusCode, 200)
  t.match(key.headers['content-type'], /^text\/plain/)
  const vkey = key.body.trim()
  t.match(vkey, /^shipping\.test\/audit\+[0-9a-f]{8}\+/)
  const res = await h.call('GET', '/audit/v1/checkpoint')
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/plain; charset=utf-8/)
  const text = openNote(res.body, parseVerifierKey(vkey))
  const head = (await h.call('GET', '/audit/v1/tree-heads/latest')).json()
  t.equal(text, `shipping.test/audit\n${head.tree_size}\n${head.root_hash}\n`, 'origin, size and root of the latest JSON head')
  t.equal(res.body, signNote(text, 'shipping.test/audit', h.platform.notaryKey.privateKey), 'signed deterministically: every process serves the same bytes')
})
