import type { RecordedEvent } from './event-store.js'

/** Turns an old payload into the current one on read; stored events are never rewritten (DESIGN §1). */
export type Upcaster = (event: RecordedEvent) => RecordedEvent

type Step = (data: any) => unknown

/** Registry of per-type upcasters: `steps[type][v]` turns schema version v into v + 1. */
export function upcasterFrom(steps: Record<string, Record<number, Step>>): Upcaster {
  return (event) => {
    const chain = steps[event.type]
    if (!chain) return event
    let { data, schemaVersion } = event
    while (chain[schemaVersion]) {
      data = chain[schemaVersion]!(data)
      schemaVersion++
    }
    return { ...event, data, schemaVersion }
  }
}
