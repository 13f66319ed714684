import { prometheusMetrics } from '../../src/infrastructure/metrics/prometheus-metrics.js'
import type { BusMetrics } from '../../src/processes/metrics.js'
import { busFigures } from '../../src/http/bus-figures.js'

// A strict reader of the Prometheus text exposition format 0.0.4: every line must be a HELP, a TYPE,
// or a sample with well-formed, escaped labels, else it throws naming the line. (The npm parsers tried
// drop the labels of histograms, which is exactly what these tests read.)

export interface Family { name: string; type: string; help: string; samples: Sample[] }
export interface Sample { name: string; labels: Record<string, string>; value: number }
export type Families = Family[]

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*'
// Values as Go's ParseFloat reads them (Prometheus's own parser): NaN and Inf in any case.
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? ([+-]?(?:[0-9.]+(?:[eE][+-]?[0-9]+)?|[nN][aA][nN]|[iI][nN][fF]))(?: -?[0-9]+)?$`)
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y

function labelsOf(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {}
  LABEL.lastIndex = 0
  while (LABEL.lastIndex < text.length) {
    const m = LABEL.exec(text)
    if (!m) throw new Error(`malformed labels: ${line}`)
    labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
  }
  return labels
}

function numberOf(text: string): number {
  if (/nan/i.test(text)) return NaN
  if (/inf/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity
  return Number(text)
}

export function parsePrometheus(text: string): Families {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline')
  const families = new Map<string, Family>()
  const familyOf = (sampleName: string) =>
    families.get(sampleName) ?? families.get(sampleName.replace(/_(bucket|count|sum|total)$/, '')) ?? families.get(sampleName.replace(/_(bucket|count|sum)$/, ''))
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue
    const meta = new RegExp(`^# (HELP|TYPE) (${NAME}) (.*)$`).exec(line)
    if (meta) {
      const f = families.get(meta[2]!) ?? { name: meta[2]!, type: 'untyped', help: '', samples: [] }
      if (meta[1] === 'TYPE') {
        if (!/^(counter|gauge|histogram|summary|untyped)$/.test(meta[3]!)) throw new Error(`unknown type: ${line}`)
        f.type = meta[3]!
      } else f.help = meta[3]!
      families.set(f.name, f)
      continue
    }
    if (line.startsWith('#')) continue
    const m = SAMPLE.exec(line)
    if (!m) throw new Error(`malformed sample line: ${line}`)
    const family = familyOf(m[1]!)
    if (!family) throw new Error(`sample without a TYPE: ${line}`)
    family.samples.push({ name: m[1]!, labels: m[2] ? labelsOf(m[2], line) : {}, value: numberOf(m[3]!) })
  }
  return [...families.values()]
}

const matches = (labels: Record<string, string>, want: Record<string, string>) => Object.entries(want).every(([k, v]) => labels[k] === v)

/** The value of the sample named `name` (a family, or a histogram's `_count`/`_sum`) whose labels include `labels`. */
export function value(families: Families, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const f of families) {
    const s = f.samples.find((x) => x.name === name && matches(x.labels, labels))
    if (s) return s.value
  }
  return undefined
}

export const family = (families: Families, name: string): Family | undefined => families.find((f) => f.name === name)

/** The exposition of bus figures alone (no process metrics). */
export async function exposeBus(m: BusMetrics): Promise<string> {
  return (await prometheusMetrics({ defaultMetrics: false }).exposition({ projections: [], bus: busFigures(m) })).text
}
