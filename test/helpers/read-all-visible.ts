import type { EventStore, RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'

/**
 * Reads the whole log until `expected` events matching `keep` are visible (or the time runs out)
 * and returns those. readAll withholds events above the snapshot's xmin, and that horizon is
 * cluster-wide: a transaction open in another test's database delays, never skips, what a reader
 * sees, so a test asserts on what becomes visible instead of on one read.
 */
export async function readAllVisible(store: Pick<EventStore, 'readAll'>, keep: (e: RecordedEvent) => boolean, expected: number, timeoutMs = 15_000): Promise<RecordedEvent[]> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const kept: RecordedEvent[] = []
    let checkpoint: string | null = null
    for (;;) {
      const page = await store.readAll(checkpoint, 1000)
      kept.push(...page.events.filter(keep))
      if (page.events.length < 1000) break
      checkpoint = page.checkpoint
    }
    if (kept.length >= expected || Date.now() > end) return kept
    await new Promise((r) => setTimeout(r, 20))
  }
}
