/**
 * Text folding for matching names typed by people against reference data.
 * Both sides of a comparison must go through the same function.
 */

// Latin letters that Unicode does not decompose into base letter + accent, so NFKD leaves them.
const UNDECOMPOSED: Record<string, string> = {
  ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i', ħ: 'h', ŧ: 't',
}
const UNDECOMPOSED_RE = new RegExp(`[${Object.keys(UNDECOMPOSED).join('')}]`, 'gu')

/**
 * Case-, accent-, punctuation- and spacing-insensitive key of a name:
 * "  Córdoba " → "cordoba", "São Paulo" → "sao paulo", "Bogotá D.C." → "bogota dc",
 * "Saint-Étienne" → "saint etienne". Dots and apostrophes vanish (abbreviations, elisions);
 * any other run of non-letters/digits is one space. The prebuilt city index stores folded names:
 * a change here raises FOLD_RULES_VERSION in src/infrastructure/geo/city-index-cache.ts.
 */
export function foldName(value: string): string {
  return value
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(UNDECOMPOSED_RE, (ch) => UNDECOMPOSED[ch] ?? ch)
    .replace(/[.'’‘`´ʻʼ]/gu, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
}

/** Trimmed, inner whitespace collapsed: the form in which a typed name is shown back. */
export function tidyName(value: string): string {
  return value.normalize('NFC').replace(/\s+/gu, ' ').trim()
}
