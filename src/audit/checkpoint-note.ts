import { createPublicKey, type KeyObject, sign, verify } from 'node:crypto'
import { HASH_BYTES } from './merkle.js'
import {
  ALG_COSIGNATURE_V1, ALG_ED25519, formatVerifierKey, isKeyName, keyHash, type Note, NoteError, noteSignatureLine, parseNote, rawPublicKeyOf,
  signaturesBy, type VerifierKey,
} from './signed-note.js'
import { type SignedHead } from './tree-store.js'
import { type NotaryKey, treeHeadSignatureHolds } from './tree-head.js'

/**
 * C2SP tlog-checkpoint (https://c2sp.org/tlog-checkpoint): the tree head as a signed note anyone's
 * transparency tooling reads: `<origin>\n<size>\n<base64 root>\n`, signed by the log's key under its
 * origin; and C2SP tlog-cosignature's Ed25519 cosignature/v1 that witnesses add to it.
 */

export interface Checkpoint {
  origin: string
  size: number
  rootHash: Buffer
}

export const checkpointText = ({ origin, size, rootHash }: Checkpoint): string => `${origin}\n${size}\n${rootHash.toString('base64')}\n`

/** The three lines of a checkpoint's text (extension lines are allowed and ignored). */
export function parseCheckpointText(text: string): Checkpoint {
  const lines = text.split('\n')
  const [origin, sizeText, rootText] = lines
  if (lines.length < 4 || !origin || !sizeText || rootText === undefined) throw new NoteError('a checkpoint is an origin, a size and a root hash, one a line')
  if (!/^(0|[1-9]\d{0,15})$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) throw new NoteError(`the checkpoint's size "${sizeText}" is not a decimal number`)
  const rootHash = Buffer.from(rootText, 'base64')
  if (rootHash.length !== HASH_BYTES || rootHash.toString('base64') !== rootText) throw new NoteError('the checkpoint\'s root hash is not 32 bytes of base64')
  return { origin, size: Number(sizeText), rootHash }
}

/** The log's key as a note verifier: the notary's Ed25519 key named by the origin (0x01). */
export const logVerifierKey = (origin: string, publicKey: KeyObject): VerifierKey =>
  ({ name: origin, alg: ALG_ED25519, hash: keyHash(origin, ALG_ED25519, rawPublicKeyOf(publicKey)), publicKey })

export const logVkey = (origin: string, publicKey: KeyObject): string => formatVerifierKey(origin, ALG_ED25519, publicKey)

/**
 * A head the notary signed, as a checkpoint note. Signed again as a note only when its stored
 * RFC 9162 signature holds under the same key: a row a database writer inserted is never turned
 * into a checkpoint (Ed25519 is deterministic, so every process gives the same bytes).
 */
export function checkpointNoteOf(head: SignedHead, key: NotaryKey, origin: string): string {
  if (!treeHeadSignatureHolds(head, head.signature, key.publicKey)) throw new NoteError(`the stored head of size ${head.treeSize} is not signed by this notary's key`)
  return signCheckpoint({ origin, size: head.treeSize, rootHash: head.rootHash }, key.privateKey)
}

export function signCheckpoint(c: Checkpoint, privateKey: KeyObject): string {
  const text = checkpointText(c)
  return `${text}\n${noteSignatureLine(text, c.origin, privateKey)}`
}

/** A checkpoint note the log (`logKey`) signed, and its parsed note; throws NoteError naming why not. */
export function openCheckpoint(note: string, logKey: VerifierKey): { checkpoint: Checkpoint; note: Note } {
  const parsed = parseNote(note)
  const checkpoint = parseCheckpointText(parsed.text)
  if (checkpoint.origin !== logKey.name) throw new NoteError(`the checkpoint names the log "${checkpoint.origin}", not "${logKey.name}"`)
  if (signaturesBy(parsed, logKey).length === 0) {
    const named = parsed.signatures.some((s) => s.name === logKey.name && s.hash === logKey.hash)
    throw new NoteError(named ? 'the log\'s signature on the checkpoint does not verify: it was altered or forged' : 'the checkpoint carries no signature of the log\'s key')
  }
  return { checkpoint, note: parsed }
}

/** The cosigner's key: a witness's Ed25519 key under its name, algorithm 0x04. */
export interface CosignerKey {
  name: string
  privateKey: KeyObject
}

export const cosignerVerifierKey = (name: string, publicKey: KeyObject): VerifierKey =>
  ({ name, alg: ALG_COSIGNATURE_V1, hash: keyHash(name, ALG_COSIGNATURE_V1, rawPublicKeyOf(publicKey)), publicKey })

export const cosignerVkey = (k: CosignerKey): string => formatVerifierKey(k.name, ALG_COSIGNATURE_V1, createPublicKey(k.privateKey))

const cosignedMessage = (text: string, timestamp: number) => Buffer.from(`cosignature/v1\ntime ${timestamp}\n${text}`)

/** A cosignature/v1 line over a checkpoint's text, at `timestamp` (POSIX seconds). */
export function cosignatureLine(text: string, key: CosignerKey, timestamp: number): string {
  if (!isKeyName(key.name)) throw new NoteError(`"${key.name}" is not a key name`)
  const head = Buffer.alloc(12)
  head.writeUInt32BE(keyHash(key.name, ALG_COSIGNATURE_V1, rawPublicKeyOf(createPublicKey(key.privateKey))), 0)
  head.writeBigUInt64BE(BigInt(timestamp), 4)
  return `\u2014 ${key.name} ${Buffer.concat([head, sign(null, cosignedMessage(text, timestamp), key.privateKey)]).toString('base64')}\n`
}

/** The timestamp of a cosignature/v1 signature (the bytes after the key hash), or undefined when it is not one. */
export function cosignatureTimestamp(signature: Uint8Array): number | undefined {
  if (signature.length !== 8 + 64) return undefined
  const t = Buffer.from(signature).readBigUInt64BE(0)
  return t < 2n ** 63n ? Number(t) : undefined
}

/** The valid cosignatures of `key` on the note's text, with their times. */
export function cosignaturesBy(note: Note, key: VerifierKey): { line: string; timestamp: number }[] {
  return note.signatures.flatMap((s) => {
    if (s.name !== key.name || s.hash !== key.hash || key.alg !== ALG_COSIGNATURE_V1) return []
    const timestamp = cosignatureTimestamp(s.signature)
    if (timestamp === undefined) return []
    try {
      return verify(null, cosignedMessage(note.text, timestamp), key.publicKey, s.signature.subarray(8)) ? [{ line: s.line, timestamp }] : []
    } catch {
      return []
    }
  })
}
