import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from 'node:crypto'
import { HASH_BYTES } from './merkle.js'

/** What the notary signs: the tree's size and root at a moment (RFC 9162 §4.9). */
export interface TreeHead {
  treeSize: number
  rootHash: Buffer
  /** Milliseconds since the epoch. */
  timestamp: number
}

/**
 * The signed bytes: RFC 9162's TreeHeadDataV2, `uint64 timestamp; uint64 tree_size;
 * opaque root_hash<32..2^8-1>; Extension sth_extensions<0..2^16-1>` with no extensions: 51 bytes
 * anyone can rebuild from the three numbers.
 */
export function treeHeadBytes({ treeSize, rootHash, timestamp }: TreeHead): Buffer {
  if (rootHash.length !== HASH_BYTES) throw new Error('a root hash is 32 bytes')
  const out = Buffer.alloc(8 + 8 + 1 + HASH_BYTES + 2)
  out.writeBigUInt64BE(BigInt(timestamp), 0)
  out.writeBigUInt64BE(BigInt(treeSize), 8)
  out.writeUInt8(HASH_BYTES, 16)
  rootHash.copy(out, 17)
  out.writeUInt16BE(0, 17 + HASH_BYTES)
  return out
}

export const signTreeHead = (head: TreeHead, privateKey: KeyObject): Buffer => sign(null, treeHeadBytes(head), privateKey)

export function treeHeadSignatureHolds(head: TreeHead, signature: Uint8Array, publicKey: KeyObject): boolean {
  try {
    return verify(null, treeHeadBytes(head), publicKey, signature)
  } catch {
    return false
  }
}

// DER prefixes of an Ed25519 key (RFC 8410): PKCS#8 around a 32-byte seed, SPKI around a 32-byte public key.
const PKCS8_SEED_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')

/**
 * The notary's signing key and what may be shown of it. The private half stays a KeyObject, which
 * prints and serialises as nothing, so no log line or response can carry it by accident.
 */
export interface NotaryKey {
  privateKey: KeyObject
  publicKey: KeyObject
  /** base64 SHA-256 of the public key's SPKI encoding (as RFC 6962 names a log). */
  keyId: string
}

export class NotaryKeyError extends Error {}

/** From a PKCS#8 PEM (`openssl genpkey -algorithm ed25519`) or a base64 32-byte seed; errors never quote the key. */
export function notaryKeyFrom(text: string, source = 'NOTARY_KEY'): NotaryKey {
  const trimmed = text.trim()
  let privateKey: KeyObject
  try {
    if (trimmed.startsWith('-----BEGIN')) {
      privateKey = createPrivateKey(trimmed)
    } else {
      const seed = Buffer.from(trimmed, 'base64')
      if (seed.length !== 32 || !/^[A-Za-z0-9+/]{43}=$/.test(trimmed)) throw new Error('not a 32-byte base64 seed')
      privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_SEED_PREFIX, seed]), format: 'der', type: 'pkcs8' })
    }
  } catch {
    throw new NotaryKeyError(`${source} must be an Ed25519 private key: a PKCS#8 PEM or its 32-byte seed in base64`)
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new NotaryKeyError(`${source} must be an Ed25519 private key, not ${privateKey.asymmetricKeyType ?? 'another kind'}`)
  const publicKey = createPublicKey(privateKey)
  return { privateKey, publicKey, keyId: keyIdOf(publicKey) }
}

export const keyIdOf = (publicKey: KeyObject): string =>
  createHash('sha256').update(publicKey.export({ format: 'der', type: 'spki' })).digest('base64')

/** A new key as PKCS#8 PEM, for DATA_DIR when NOTARY_KEY is unset. */
export const generatedNotaryKeyPem = (): string =>
  generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()

export const publicKeyPem = (publicKey: KeyObject): string => publicKey.export({ format: 'pem', type: 'spki' }).toString()
export const publicKeyRaw = (publicKey: KeyObject): Buffer => Buffer.from(publicKey.export({ format: 'der', type: 'spki' })).subarray(SPKI_PREFIX.length)

/**
 * An auditor's copy of the public key: the SPKI PEM, the JSON `GET /audit/v1/public-key` answers
 * (its `pem` or `public_key`), or the raw 32 bytes in base64.
 */
export function publicKeyFrom(text: string): KeyObject {
  let t = text.trim()
  if (t.startsWith('{')) {
    let parsed: { pem?: unknown; public_key?: unknown }
    try { parsed = JSON.parse(t) } catch { throw new NotaryKeyError('the public key file is not valid JSON') }
    if (typeof parsed.pem === 'string') t = parsed.pem.trim()
    else if (typeof parsed.public_key === 'string') t = parsed.public_key.trim()
    else throw new NotaryKeyError('the public key JSON has neither `pem` nor `public_key`')
  }
  let key: KeyObject
  try {
    if (t.startsWith('-----BEGIN')) key = createPublicKey(t)
    else {
      const raw = Buffer.from(t, 'base64')
      if (raw.length !== 32) throw new Error('not 32 bytes')
      key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' })
    }
  } catch {
    throw new NotaryKeyError('the public key is neither an SPKI PEM nor 32 bytes of base64')
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new NotaryKeyError(`the public key is ${key.asymmetricKeyType ?? 'of another kind'}, not Ed25519`)
  return key
}
