import { randomBytes, randomFillSync } from 'node:crypto'
import { monotonicFactory } from 'ulidx'

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

/** Public ids: a prefix (DESIGN §3.4) and 20 lower-case base32 characters (100 random bits). */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'
export function publicId(prefix: 'org' | 'ple' | 'car' | 'trf' | 'usr' | 'veh' | 'tok' | 'ctr' | 'ntf' | 'att' | 'whk' | 'msg'): string {
  const bytes = randomBytes(20)
  let out = ''
  for (const b of bytes) out += ALPHABET[b & 31]
  return `${prefix}_${out}`
}
