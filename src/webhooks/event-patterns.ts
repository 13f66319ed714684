import { KNOWN_WEBHOOK_TYPES } from './organization-events.js'

// What a subscription may name (DESIGN §3.9): a known type (`task.completed`), a family wildcard
// (`task.*`) of a known family, or `custom.<name>` (the blueprint action `emit_event`).
const FAMILIES = new Set(KNOWN_WEBHOOK_TYPES.map((t) => t.slice(0, t.indexOf('.'))))
const CUSTOM = /^custom\.[a-z0-9_][a-z0-9_.-]{0,63}$/

/** Why a pattern is refused, or null when it is valid. */
export function patternProblem(pattern: string): string | null {
  if (KNOWN_WEBHOOK_TYPES.includes(pattern)) return null
  if (pattern.endsWith('.*') && FAMILIES.has(pattern.slice(0, -2))) return null
  if (pattern === 'custom.*' || CUSTOM.test(pattern)) return null
  return `The event ${JSON.stringify(pattern.slice(0, 100))} is not a known type, a wildcard such as task.*, or custom.<name>.`
}

/** Whether a subscription's patterns cover an event type. */
export function matches(patterns: readonly string[], type: string): boolean {
  for (const p of patterns) {
    if (p === type) return true
    if (p.endsWith('.*') && type.startsWith(p.slice(0, -1))) return true
  }
  return false
}
