import bidiModule from 'bidi-js'
import { faceFor, fontHas, isArabicLetter, type Face } from './label-fonts.js'

/** A piece of one line drawn in one font, in the order it is drawn from left to right. */
export interface Run {
  face: Face
  /** The characters as they are given to the font's layout (see `visualRuns`). */
  text: string
  /** Arabic letters need the whole run shaped at once (pdfkit otherwise lays words out one by one). */
  shaped: boolean
}

// A CommonJS module whose whole export is the factory; its types describe it as an ES default export,
// which TypeScript then looks for on `module.exports`. Node gives the factory itself.
const bidi = (typeof bidiModule === 'function' ? bidiModule : bidiModule.default)()

/**
 * Splits one line of logical (typed) text into runs of one font each and orders them for drawing
 * left to right by the Unicode bidirectional algorithm (bidi-js), so that an Arabic street name
 * reads right to left and its house number stays `12`, not `21`. Spaces, digits and punctuation
 * take the font of the letter before them. A character no font has becomes `?`.
 */
export function visualRuns(line: string): Run[] {
  // Fitting a line measures many prefixes of it; the same words recur on every label.
  let runs = memo.get(line)
  if (!runs) {
    if (memo.size >= MEMO_SIZE) memo.clear()
    memo.set(line, (runs = runsOf(line)))
  }
  return runs
}

const MEMO_SIZE = 4096
const memo = new Map<string, Run[]>()

function runsOf(line: string): Run[] {
  const chars: { ch: string; face: Face }[] = []
  let previous: Face | undefined
  for (const ch of line) {
    const cp = ch.codePointAt(0)!
    const neutral = /[\p{Zs}\p{N}\p{P}\p{S}]/u.test(ch) && !isArabicLetter(cp)
    const own = faceFor(cp)
    if (own === undefined) { chars.push({ ch: '?', face: previous ?? 'latin' }); continue }
    const face = neutral && previous !== undefined && fontHas(previous, cp) ? previous : own
    chars.push({ ch, face })
    previous = face
  }
  const text = chars.map((c) => c.ch).join('')
  if (text === '') return []
  const { levels } = bidi.getEmbeddingLevels(text)

  // Logical runs: one font and one embedding level each (levels are per UTF-16 unit).
  const runs: { face: Face; text: string; level: number }[] = []
  let unit = 0
  for (const c of chars) {
    const level = levels[unit]!
    unit += c.ch.length
    const last = runs.at(-1)
    if (last && last.face === c.face && last.level === level) last.text += c.ch
    else runs.push({ face: c.face, text: c.ch, level })
  }

  // UAX #9 rule L2: from the highest level down to the lowest odd one, reverse every sequence of
  // runs at that level or above.
  const order = runs.map((_, i) => i)
  const max = Math.max(...runs.map((r) => r.level))
  const lowestOdd = Math.min(...runs.map((r) => r.level).filter((l) => l % 2 === 1), Infinity)
  for (let level = max; level >= lowestOdd; level--) {
    for (let i = 0; i < order.length; ) {
      if (runs[order[i]!]!.level < level) { i++; continue }
      let j = i
      while (j < order.length && runs[order[j]!]!.level >= level) j++
      order.splice(i, j - i, ...order.slice(i, j).reverse())
      i = j
    }
  }

  return order.map((i) => {
    const r = runs[i]!
    const rtl = r.level % 2 === 1
    // fontkit reverses a run with Arabic letters by itself; any other run at an odd level is
    // reversed here (and its brackets mirrored), so each comes out left to right.
    const fontkitReverses = Array.from(r.text).some((ch) => isArabicLetter(ch.codePointAt(0)!))
    const text = rtl === fontkitReverses ? r.text : reversed(r.text, rtl)
    return { face: r.face, text, shaped: fontkitReverses }
  })
}

function reversed(text: string, mirror: boolean): string {
  return Array.from(text).reverse().map((ch) => (mirror ? bidi.getMirroredCharacter(ch) ?? ch : ch)).join('')
}
