import { randomInt } from 'node:crypto'
import { hashToken } from '../shared/tokens.js'

// Letters and digits no one misreads on a phone (no 0/O, 1/I/L, U/V): 29 symbols, 12 of them
// ≈ 58 bits. Guessing one before it expires (minutes) against the per-address budget is hopeless.
const SYMBOLS = 'ABCDEFGHJKMNPQRSTWXYZ23456789'
const LENGTH = 12

/** A new sign-in code, shown once as `XXXX-XXXX-XXXX`; only its hash is recorded. */
export function newSignInCode(): { code: string; codeHash: string } {
  let raw = ''
  for (let i = 0; i < LENGTH; i++) raw += SYMBOLS[randomInt(SYMBOLS.length)]
  return { code: `${raw.slice(0, 4)}-${raw.slice(4, 8)}-${raw.slice(8)}`, codeHash: signInCodeHash(raw) }
}

/** The code as typed or taken from the link: case, spaces and dashes do not matter. */
export const normalizeSignInCode = (typed: string) => typed.toUpperCase().replace(/[^A-Z0-9]/g, '')

export const signInCodeHash = (typed: string) => hashToken(`sign-in:${normalizeSignInCode(typed)}`)
