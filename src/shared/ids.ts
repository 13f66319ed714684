import { createHash, randomBytes, randomFillSync } from 'node:crypto'
import { encodeTime, monotonicFactory } from 'ulidx'

/**
 * ulidx's default generator asks the kernel for one random byte per character (16 system calls
 * per ULID, a visible share of POST /shipments' CPU); this one draws the same CSPRNG bytes from a
 * pool filled 4 KiB at a time, mapped to [0, 1] exactly as ulidx maps its own (byte / 255).
 */
const pool = new Uint8Array(4096)
let next = pool.length
const pooledRandom = (): number => {
  if (next === pool.length) { randomFillSync(pool); next = 0 }
  return pool[next++]! / 0xff
}

const ulid = monotonicFactory(pooledRandom)
export const newUlid = (): string => ulid()

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/**
 * A ULID that is a function of a key and a time: the time part is `at` (so ids sort, and read back,
 * by time like every other ULID), the 80 random bits are the key's SHA-256. The same key and time
 * give the same id, so a retried command names the same stream and the store refuses a second one.
 */
export function ulidFromKey(key: string, at: Date): string {
  const hash = createHash('sha256').update(key).digest()
  let random = ''
  // 16 characters of 5 bits from the hash's first 10 bytes, as a ULID's randomness is laid out.
  for (let bit = 0; bit < 80; bit += 5) {
    const byte = bit >> 3
    const word = (hash[byte]! << 8) | hash[byte + 1]!
    random += CROCKFORD[(word >> (11 - (bit & 7))) & 31]
  }
  return encodeTime(at.getTime(), 10) + random
}

/** Public ids: a prefix (DESIGN §3.4) and 20 lower-case base32 characters (100 random bits). */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'
export function publicId(prefix: 'org' | 'ple' | 'car' | 'trf' | 'usr' | 'veh' | 'tok' | 'ctr' | 'ntf' | 'att' | 'whk' | 'msg' | 'sil'): string {
  const bytes = randomBytes(20)
  let out = ''
  for (const b of bytes) out += ALPHABET[b & 31]
  return `${prefix}_${out}`
}
