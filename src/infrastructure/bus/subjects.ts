import { BUS_SUBJECT_ROOTS } from './bus.js'

// NATS subject rules: tokens separated by '.', no whitespace, '*' and '>' only as whole tokens.
const TOKEN = /^[^\s.*>]+$/

// How an event's free text becomes a token is the events' subject spelling (shared, below the bus).
export { subjectToken } from '../../shared/event-subjects.js'

export function assertSubject(subject: string): void {
  const tokens = subject.split('.')
  if (tokens.length < 2 || !tokens.every((t) => TOKEN.test(t))) throw new Error(`invalid bus subject "${subject}"`)
  if (!BUS_SUBJECT_ROOTS.some((root) => root === tokens[0])) {
    throw new Error(`bus subject "${subject}" must start with one of ${BUS_SUBJECT_ROOTS.join(', ')}`)
  }
}

export function assertPattern(pattern: string): void {
  const tokens = pattern.split('.')
  const ok = tokens.every((t, i) => t === '*' || (t === '>' && i === tokens.length - 1) || TOKEN.test(t))
  if (!ok || tokens.length === 0) throw new Error(`invalid subject pattern "${pattern}"`)
}

export const assertConsumerName = (name: string): void => {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(name)) throw new Error(`invalid consumer name "${name}": use [A-Za-z0-9_-]`)
}

export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.')
  const s = subject.split('.')
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i
    if (i >= s.length) return false
    if (p[i] !== '*' && p[i] !== s[i]) return false
  }
  return p.length === s.length
}

const escapeRegex = (s: string) => s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&')

/** A POSIX regular expression for PostgreSQL's `~` equal to matching any of the patterns. */
export function patternsToRegex(patterns: string[]): string {
  const one = (pattern: string) => pattern.split('.').map((t) => (t === '*' ? '[^.]+' : t === '>' ? '.+' : escapeRegex(t))).join('\\.')
  return `^(${patterns.map(one).join('|')})$`
}
