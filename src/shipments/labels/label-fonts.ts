import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { create, type Font } from 'fontkit'

/**
 * The label's fonts, all Noto (SIL Open Font License) from npm packages: Noto Sans for Latin,
 * Greek and Cyrillic, Noto Naskh Arabic, and Noto Sans CJK SC ("Hans") for Chinese, Japanese kana
 * and Korean. pdfkit embeds only the glyphs a label uses (a subset), so a label with one Chinese
 * name carries a few kilobytes of the 8 MB font.
 */
export type Face = 'latin' | 'arabic' | 'cjk'
export const FACES: readonly Face[] = ['latin', 'arabic', 'cjk']

const require = createRequire(import.meta.url)
// The packages export no path to their files; each has its fonts beside its dist/ folder.
const fontsOf = (main: string) => join(dirname(main), '..', 'fonts')
const FILES: Record<Face, { regular: string; bold: string }> = {
  latin: { regular: 'NotoSans-Regular.ttf', bold: 'NotoSans-Bold.ttf' },
  arabic: { regular: 'NotoNaskhArabic-Regular.ttf', bold: 'NotoNaskhArabic-Bold.ttf' },
  cjk: { regular: 'NotoSansHans-Regular.otf', bold: 'NotoSansHans-Bold.otf' },
}
const DIRS: Record<Face, () => string> = {
  latin: () => fontsOf(require.resolve('@embedpdf/fonts-latin')),
  arabic: () => fontsOf(require.resolve('@embedpdf/fonts-arabic')),
  cjk: () => fontsOf(require.resolve('@embedpdf/fonts-sc')),
}

export const fontFile = (face: Face, bold: boolean): string => join(DIRS[face](), FILES[face][bold ? 'bold' : 'regular'])

/** The name a font is registered under in each document: `latin-bold`. */
export const fontName = (face: Face, bold: boolean): string => `${face}-${bold ? 'bold' : 'regular'}`

// Read and parsed once per process, at the first label that needs each (the CJK pair is 17 MB):
// parsing a font's tables for every document cost more than drawing the label. pdfkit takes the
// parsed font as it is and makes each document's subset from it.
const parsed = new Map<string, Font>()
export function parsedFont(face: Face, bold: boolean): Font {
  const file = fontFile(face, bold)
  let f = parsed.get(file)
  if (!f) parsed.set(file, (f = oneFont(file)))
  return f
}

function oneFont(file: string): Font {
  const created = create(readFileSync(file))
  // create gives a collection for .ttc and .dfont files; the label's fonts are single .ttf and .otf files.
  if (!('layout' in created)) throw new Error(`${file} is a font collection, not one font`)
  return created
}

/** The regular face answers which characters a face has (the bold one covers the same). */
const font = (face: Face): Font => parsedFont(face, false)

export const fontHas = (face: Face, codePoint: number): boolean => font(face).hasGlyphForCodePoint(codePoint)

/** The first face with a glyph for the character, Arabic letters in the Arabic face; none: undefined. */
export function faceFor(codePoint: number): Face | undefined {
  if (isArabicLetter(codePoint)) return fontHas('arabic', codePoint) ? 'arabic' : undefined
  return FACES.find((f) => fontHas(f, codePoint))
}

export const isArabicLetter = (codePoint: number): boolean => /\p{Script=Arabic}/u.test(String.fromCodePoint(codePoint))
