import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto'

/**
 * C2SP signed-note (https://c2sp.org/signed-note), the envelope of checkpoints and cosignatures:
 * a text of newline-terminated lines, a blank line, then signature lines `— <name> <base64(keyhash4 ||
 * signature)>`. A key is named and hashed with its algorithm byte: 0x01 for a note's own Ed25519
 * signature, 0x04 for a timestamped cosignature (tlog-cosignature). Byte for byte as
 * golang.org/x/mod/sumdb/note (test/audit/checkpoint-note.test.ts checks it against its vectors).
 */

export const ALG_ED25519 = 0x01
export const ALG_COSIGNATURE_V1 = 0x04

const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')
const PKCS8_SEED_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')
const DASH = '\u2014 '

export class NoteError extends Error {
  override name = 'NoteError'
}

/** A key name: non-empty, no whitespace, no `+` (it separates a vkey's parts). */
export const isKeyName = (name: string): boolean => name.length > 0 && !/[\s+]/u.test(name)

/** SHA-256(name || "\n" || alg || publicKey)[:4] as a big-endian number. */
export function keyHash(name: string, alg: number, rawPublicKey: Uint8Array): number {
  return createHash('sha256').update(name).update('\n').update(Buffer.from([alg])).update(rawPublicKey).digest().readUInt32BE(0)
}

export const rawPublicKeyOf = (publicKey: KeyObject): Buffer =>
  Buffer.from(publicKey.export({ format: 'der', type: 'spki' })).subarray(SPKI_PREFIX.length)

export const publicKeyOfRaw = (raw: Uint8Array): KeyObject =>
  createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' })

export const privateKeyOfSeed = (seed: Uint8Array): KeyObject =>
  createPrivateKey({ key: Buffer.concat([PKCS8_SEED_PREFIX, seed]), format: 'der', type: 'pkcs8' })

/** A verifier key as anyone configures it: its name, algorithm and Ed25519 public key. */
export interface VerifierKey {
  name: string
  alg: number
  hash: number
  publicKey: KeyObject
}

const hex8 = (n: number) => n.toString(16).padStart(8, '0')

/** `<name>+<hash hex>+<base64(alg || public key)>`. */
export function formatVerifierKey(name: string, alg: number, publicKey: KeyObject): string {
  if (!isKeyName(name)) throw new NoteError(`"${name}" is not a key name (no spaces or +)`)
  const raw = rawPublicKeyOf(publicKey)
  return `${name}+${hex8(keyHash(name, alg, raw))}+${Buffer.concat([Buffer.from([alg]), raw]).toString('base64')}`
}

/** Parses a vkey, checking its hash; `algs` lists the algorithm bytes accepted. */
export function parseVerifierKey(vkey: string, algs: number[] = [ALG_ED25519]): VerifierKey {
  // The key's base64 may hold `+` too: the first two split it, as Go's note.NewVerifier does.
  const m = /^([^+]*)\+([^+]*)\+(.*)$/s.exec(vkey.trim())
  if (!m) throw new NoteError('a verifier key is <name>+<hash>+<key>')
  const [, name, hashText, keyText] = m as unknown as [string, string, string, string]
  if (!isKeyName(name) || !/^[0-9a-f]{8}$/.test(hashText)) throw new NoteError('a verifier key is <name>+<8 hex digits>+<base64 key>')
  if (!/^[A-Za-z0-9+/]+=*$/.test(keyText)) throw new NoteError('the verifier key\'s key is not base64')
  const material = Buffer.from(keyText, 'base64')
  if (material.length !== 33 || !algs.includes(material[0]!)) throw new NoteError(`the verifier key is not an Ed25519 key of type ${algs.map((a) => `0x0${a}`).join(' or ')}`)
  const raw = material.subarray(1)
  const hash = parseInt(hashText, 16)
  if (keyHash(name, material[0]!, raw) !== hash) throw new NoteError('the verifier key\'s hash does not match its name and key')
  return { name, alg: material[0]!, hash, publicKey: publicKeyOfRaw(raw) }
}

export interface NoteSignature {
  name: string
  hash: number
  /** The bytes after the key hash: an Ed25519 signature, or timestamp || signature. */
  signature: Buffer
  line: string
}

export interface Note {
  /** Every line up to and including the last newline before the blank line. */
  text: string
  signatures: NoteSignature[]
}

/** The note's text and signature lines, without verifying any; throws NoteError on a malformed note. */
export function parseNote(note: string): Note {
  const split = note.lastIndexOf('\n\n')
  if (split < 0 || !note.endsWith('\n')) throw new NoteError('malformed note: no blank line before the signatures, or no final newline')
  const text = note.slice(0, split + 1)
  const lines = note.slice(split + 2, -1).split('\n')
  if (/[\x00-\x08\x0b-\x1f\x7f]/.test(text)) throw new NoteError('malformed note: control characters in its text')
  const signatures = lines.map((line): NoteSignature => {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/]+=*)$/u.exec(line)
    if (!m || !isKeyName(m[1]!)) throw new NoteError(`malformed note: "${line}" is not a signature line`)
    const bytes = Buffer.from(m[2]!, 'base64')
    if (bytes.length < 5) throw new NoteError('malformed note: a signature is too short')
    return { name: m[1]!, hash: bytes.readUInt32BE(0), signature: bytes.subarray(4), line: `${line}\n` }
  })
  if (signatures.length === 0 || signatures.length > 100) throw new NoteError('malformed note: it has no signature, or too many')
  return { text, signatures }
}

/** The signature line of `text` signed with an Ed25519 key under `name` (algorithm 0x01). */
export function noteSignatureLine(text: string, name: string, privateKey: KeyObject): string {
  if (!text.endsWith('\n')) throw new NoteError('a note\'s text ends with a newline')
  const raw = rawPublicKeyOf(createPublicKey(privateKey))
  const prefix = Buffer.alloc(4)
  prefix.writeUInt32BE(keyHash(name, ALG_ED25519, raw))
  return `${DASH}${name} ${Buffer.concat([prefix, sign(null, Buffer.from(text), privateKey)]).toString('base64')}\n`
}

export const signNote = (text: string, name: string, privateKey: KeyObject): string => `${text}\n${noteSignatureLine(text, name, privateKey)}`

/** The signatures of `note` made by `key` (name and hash match) and valid over its text. */
export function signaturesBy(note: Note, key: VerifierKey): NoteSignature[] {
  return note.signatures.filter((s) => s.name === key.name && s.hash === key.hash && key.alg === ALG_ED25519
    && (() => { try { return verify(null, Buffer.from(note.text), key.publicKey, s.signature) } catch { return false } })())
}

/** A note whose text `key` signed: its text; else throws NoteError naming why. */
export function openNote(note: string, key: VerifierKey): string {
  const parsed = parseNote(note)
  if (signaturesBy(parsed, key).length > 0) return parsed.text
  const named = parsed.signatures.some((s) => s.name === key.name && s.hash === key.hash)
  throw new NoteError(named ? `the signature of ${key.name} does not verify: the note was altered or forged` : `the note carries no signature of ${key.name}+${hex8(key.hash)}`)
}
