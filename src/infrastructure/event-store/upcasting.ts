import type { RecordedEvent } from './event-store.js'
import { schemaChanges, type SchemaChanges } from '../../../schemas/events/upcasters.js'

/** Turns an old event into the current one on read; stored events are never rewritten (DESIGN §1). */
export type Upcaster = (event: RecordedEvent) => RecordedEvent

/** The current name of every renamed type, chains followed; a cycle is a mistake in the table. */
function resolveRenames(renames: Record<string, string>): Map<string, string> {
  const resolved = new Map<string, string>()
  for (const old of Object.keys(renames)) {
    const seen = new Set([old])
    let name = renames[old]!
    while (Object.hasOwn(renames, name)) {
      if (seen.has(name)) throw new Error(`event renames form a cycle through ${name}`)
      seen.add(name)
      name = renames[name]!
    }
    resolved.set(old, name)
  }
  return resolved
}

/** The upcaster of a table of renames and per-type version steps. */
export function upcasterFrom({ renames = {}, steps = {} }: SchemaChanges): Upcaster {
  const currentName = resolveRenames(renames)
  return (event) => {
    const type = currentName.get(event.type) ?? event.type
    const chain = Object.hasOwn(steps, type) ? steps[type]! : undefined
    if (!chain && type === event.type) return event
    let { data, schemaVersion } = event
    while (chain?.[schemaVersion]) {
      data = chain[schemaVersion]!(data)
      schemaVersion++
    }
    return { ...event, type, data, schemaVersion }
  }
}

/** The upcaster of this code's events: the table of schemas/events/upcasters.ts. */
export const upcasters = upcasterFrom(schemaChanges)
