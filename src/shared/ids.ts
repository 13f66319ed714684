import { randomBytes } from 'node:crypto'
import { monotonicFactory } from 'ulidx'

const ulid = monotonicFactory()
export const newUlid = (): string => ulid()

/** Public ids: a prefix (DESIGN §3.4) and 20 lower-case base32 characters (100 random bits). */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'
export function publicId(prefix: 'org' | 'ple' | 'car' | 'trf' | 'usr' | 'veh' | 'tok' | 'ctr' | 'ntf' | 'att'): string {
  const bytes = randomBytes(20)
  let out = ''
  for (const b of bytes) out += ALPHABET[b & 31]
  return `${prefix}_${out}`
}
