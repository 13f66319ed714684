/**
 * Phone numbers to E.164 with libphonenumber-js. The "max" metadata is used because it checks
 * each country's actual number ranges; the default metadata checks lengths only and would accept
 * e.g. an Argentine number in an unassigned range. It costs ~150 kB of memory once, on a server.
 */
import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js/max'

export type PhoneResult =
  | { ok: true, e164: string, raw: string, countryIso: string | undefined }
  | { ok: false }

/** Long enough for any number with formatting and an extension; longer input is not a phone. */
const MAX_RAW_LENGTH = 64

function parse(text: string, defaultCountry: CountryCode | undefined) {
  const number = parsePhoneNumberFromString(text, defaultCountry === undefined ? undefined : { defaultCountry })
  return number?.isValid() ? number : undefined
}

/**
 * Accepts international numbers ("+54 9 11 4321-5678", "0054 11 …") and, when the country is
 * known, national ones ("011 15-4321-5678" in AR); spaces, dashes, dots and parentheses are
 * ignored. `raw` is the input trimmed (the spec's `phone_raw`); an extension is kept in `raw`
 * only, since E.164 has none.
 */
export function normalizePhone(raw: unknown, defaultCountryIso?: string | null): PhoneResult {
  if (typeof raw !== 'string') return { ok: false }
  const text = raw.trim()
  if (text === '' || text.length > MAX_RAW_LENGTH) return { ok: false }
  // Parsing costs ~50 µs; shippers send the same depot and customer numbers again and again.
  const key = `${defaultCountryIso ?? ''}|${text}`
  const known = memo.get(key)
  if (known) return known
  const result = normalize(text, defaultCountryIso)
  if (memo.size >= MEMO_SIZE) memo.delete(memo.keys().next().value!)
  memo.set(key, result)
  return result
}

const MEMO_SIZE = 10_000
const memo = new Map<string, PhoneResult>()

function normalize(text: string, defaultCountryIso: string | null | undefined): PhoneResult {
  const country = defaultCountryIso ? defaultCountryIso.trim().toUpperCase() as CountryCode : undefined
  let number = parse(text, country)
  // "00" is the international prefix in most of the world; without a default country the
  // library cannot know it, so read it as "+".
  if (!number && text.startsWith('00')) number = parse(`+${text.slice(2)}`, undefined)
  return number ? { ok: true, e164: number.number, raw: text, countryIso: number.country } : { ok: false }
}
