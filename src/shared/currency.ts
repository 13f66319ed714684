/**
 * ISO 4217 currency codes (list from `currency-codes`, which follows the ISO maintenance agency's
 * list). Input is tolerant of case and surrounding spaces; the stored form is upper case.
 */
import { code as lookupCurrency } from 'currency-codes'

/** Spec: `declared_value_currency` is at most 4 characters. */
export const MAX_CURRENCY_LENGTH = 4

/** "usd", " USD " → "USD"; undefined when not an ISO 4217 code. */
export function normalizeCurrency(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined
  const code = raw.trim().toUpperCase()
  if (!/^[A-Z]{3}$/.test(code)) return undefined
  return lookupCurrency(code)?.code
}

export function isIso4217(raw: unknown): boolean {
  return normalizeCurrency(raw) !== undefined
}

/** Decimal places of the currency's minor unit (2 for USD, 0 for JPY, 3 for KWD). */
export function currencyMinorUnits(code: string): number | undefined {
  const found = normalizeCurrency(code)
  return found === undefined ? undefined : lookupCurrency(found)?.digits
}
