import { randomUUID } from 'node:crypto'
import type { Test } from 'tap'
import {
  ConcurrencyError, type EventStore, type NewEvent, type RecordedEvent,
} from '../../../src/infrastructure/event-store/event-store.js'
import { upcasterFrom, type Upcaster } from '../../../src/infrastructure/event-store/upcasting.js'

/** A transaction that has written one event and is held open until `commit` (the out-of-order race). */
export interface HeldAppend {
  commit(): Promise<void>
  rollback(): Promise<void>
}

export interface ContractSubject {
  store: EventStore
  /**
   * Writes one event in a transaction of its own connection and leaves it open; `takeIdOnly`
   * takes the transaction id but inserts only at `insertNow()`. Undefined when the adapter has no
   * open transactions to race (EventStoreDB), and the race is reported as not run.
   */
  holdAppend?: (streamId: string, opts?: { takeIdOnly?: boolean }) => Promise<HeldAppend & { insertNow(): Promise<void> }>
  /** Why `holdAppend` is missing, printed in the test output. */
  noRaceReason?: string
  /** The same log read by the adapter through an upcaster (as the platform builds it). */
  upcasting(upcast: Upcaster): Promise<EventStore>
}

export type ContractFactory = (t: Test) => Promise<ContractSubject>

const stream = (label: string) => `contract-${label}-${randomUUID().slice(0, 8)}`

export const event = (type: string, n: number, id?: string): NewEvent => ({
  ...(id ? { id } : {}),
  type,
  data: { n, nested: { list: [n, String(n)] } },
  metadata: { actor: { kind: 'system', id: 'contract' }, occurred_at: new Date(Date.UTC(2026, 10, 22, 0, 0, n)).toISOString() },
})

/**
 * Reads the log after `from` in pages of `limit`, keeping only the given streams, until `expected`
 * of them were seen (or 10 s passed). Waiting is part of the contract: an open transaction anywhere
 * in the cluster (another test file, say) holds back the snapshot xmin and hides newer events.
 */
async function readAllOf(store: EventStore, from: string | null, streams: string[], expected: number, limit = 2): Promise<{ events: RecordedEvent[]; checkpoint: string }> {
  let checkpoint = from
  const out: RecordedEvent[] = []
  const deadline = Date.now() + 10_000
  for (;;) {
    const page = await store.readAll(checkpoint, limit)
    out.push(...page.events.filter((e) => streams.includes(e.streamId)))
    checkpoint = page.checkpoint
    if (page.events.length > 0) continue
    if (out.length >= expected || Date.now() > deadline) return { events: out, checkpoint: page.checkpoint }
    await new Promise((r) => setTimeout(r, 20))
  }
}

const rejection = async (p: Promise<unknown>): Promise<unknown> => {
  try { await p } catch (err) { return err }
  return undefined
}

/** The behaviour every EventStore adapter must show (DESIGN §2). */
export function eventStoreContract(t: Test, factory: ContractFactory): void {
  t.test('EventStore contract', async (t) => {
    const subject = await factory(t)
    const { store } = subject

    t.test('no_stream creates a stream and refuses an existing one', async (t) => {
      const s = stream('nostream')
      const r = await store.append(s, [event('Happened', 1), event('Happened', 2)], 'no_stream')
      t.equal(r.nextVersion, 2)
      t.equal(r.appended, true)
      const err = await rejection(store.append(s, [event('Happened', 3)], 'no_stream'))
      t.type(err, ConcurrencyError)
      t.equal((await store.readStream(s)).length, 2, 'the refused append wrote nothing')
    })

    t.test('an exact expected version appends only at that version', async (t) => {
      const s = stream('exact')
      await store.append(s, [event('Happened', 1), event('Happened', 2)], 'no_stream')
      const r = await store.append(s, [event('Happened', 3)], 2)
      t.equal(r.nextVersion, 3)
      for (const wrong of [2, 1, 7]) {
        const err = await rejection(store.append(s, [event('Happened', 9)], wrong))
        t.type(err, ConcurrencyError, `expected ${wrong} at version 3 is a conflict`)
        t.equal((err as ConcurrencyError).code, 'concurrency_conflict')
      }
      const err = await rejection(store.append(stream('exact-missing'), [event('Happened', 1)], 3))
      t.type(err, ConcurrencyError, 'an exact version on a missing stream is a conflict')
      t.same((await store.readStream(s)).map((e) => e.streamVersion), [1, 2, 3])
    })

    t.test('any appends whatever the stream holds', async (t) => {
      const s = stream('any')
      t.equal((await store.append(s, [event('Happened', 1)], 'any')).nextVersion, 1)
      t.equal((await store.append(s, [event('Happened', 2), event('Happened', 3)], 'any')).nextVersion, 3)
      t.same((await store.readStream(s)).map((e) => (e.data as any).n), [1, 2, 3])
    })

    t.test('stream_exists refuses a missing stream and appends to an existing one', async (t) => {
      const s = stream('exists')
      t.type(await rejection(store.append(s, [event('Happened', 1)], 'stream_exists')), ConcurrencyError)
      await store.append(s, [event('Happened', 1)], 'no_stream')
      t.equal((await store.append(s, [event('Happened', 2)], 'stream_exists')).nextVersion, 2)
    })

    t.test('readStream returns the events as written, from a version', async (t) => {
      const s = stream('read')
      const id = randomUUID()
      const written = await store.append(s, [event('First', 1, id), event('Second', 2), event('Third', 3)], 'no_stream')
      const all = await store.readStream(s)
      t.same(all.map((e) => [e.type, e.streamVersion, e.streamId]), [['First', 1, s], ['Second', 2, s], ['Third', 3, s]])
      t.equal(all[0]!.id, id)
      t.same(all[0]!.data, { n: 1, nested: { list: [1, '1'] } })
      t.match(all[0]!.metadata, { actor: { kind: 'system', id: 'contract' }, occurred_at: '2026-11-22T00:00:01.000Z' })
      t.equal(all[0]!.schemaVersion, 1)
      t.ok(all[0]!.recordedAt instanceof Date && !Number.isNaN(all[0]!.recordedAt.getTime()))
      t.equal(all[2]!.position, written.position, 'the append reports the last event\'s position')
      t.same((await store.readStream(s, { fromVersion: 2 })).map((e) => e.type), ['Second', 'Third'])
      t.same(await store.readStream(stream('never-written')), [])
    })

    t.test('readStreams reads several streams at once, each in order, filtered by type', async (t) => {
      const a = stream('many-a')
      const b = stream('many-b')
      await store.append(a, [event('Kept', 1), event('Dropped', 2), event('Kept', 3)], 'no_stream')
      await store.append(b, [event('Dropped', 4)], 'no_stream')
      const all = await store.readStreams([a, b, stream('many-none')])
      t.same([...all.keys()].sort(), [a, b].sort(), 'a stream with no event is not in the map')
      t.same(all.get(a)!.map((e) => [e.type, e.streamVersion]), [['Kept', 1], ['Dropped', 2], ['Kept', 3]])
      const kept = await store.readStreams([a, b], { types: ['Kept'] })
      t.same(kept.get(a)!.map((e) => (e.data as { n: number }).n), [1, 3])
      t.notOk(kept.has(b), 'only the types asked for')
      t.same(await store.readStreams([]), new Map())
    })

    t.test('readAll pages through the log from an opaque checkpoint, in order', async (t) => {
      const before = await store.headPosition()
      const a = stream('all-a')
      const b = stream('all-b')
      await store.append(a, [event('A', 1), event('A', 2)], 'no_stream')
      await store.append(b, [event('B', 3)], 'no_stream')
      await store.append(a, [event('A', 4), event('A', 5)], 2)
      const { events, checkpoint } = await readAllOf(store, before, [a, b], 5)
      t.same(events.map((e) => (e.data as any).n), [1, 2, 3, 4, 5], 'every event once, in append order')
      for (let i = 1; i < events.length; i++) {
        t.equal(store.comparePositions(events[i - 1]!.position, events[i]!.position), -1, 'positions strictly increase')
      }
      t.equal(store.comparePositions(checkpoint, events[4]!.position), 0, 'the last checkpoint is the last event read')
      t.equal(store.comparePositions(await store.headPosition(), events[4]!.position), 0, 'headPosition is the newest event')
      const again = await store.readAll(checkpoint, 100)
      t.same(again.events.filter((e) => e.streamId === a || e.streamId === b), [], 'nothing after the checkpoint')
      t.equal(again.checkpoint, checkpoint, 'an empty read returns the checkpoint it was given')
      const fromMiddle = await readAllOf(store, events[1]!.position, [a, b], 3, 100)
      t.same(fromMiddle.events.map((e) => (e.data as any).n), [3, 4, 5], 'resuming from a checkpoint excludes it')
      const fromStart = await readAllOf(store, null, [a, b], 5, 1000)
      t.same(fromStart.events.map((e) => (e.data as any).n), [1, 2, 3, 4, 5], 'null reads from the start')
      t.equal(store.comparePositions(store.startPosition, events[0]!.position), -1, 'startPosition is before every event')
      t.equal(await store.eventsAfter(await store.headPosition()), 0, 'no events after the head (a caught-up reader\'s lag)')
      const lag = await store.eventsAfter(before)
      t.ok(lag === null || lag >= 5, `the events after an earlier position are counted, or unknown (${lag})`)
      const behind = await store.eventsAfter(events[2]!.position)
      t.ok(behind === null || (lag !== null && behind === lag - 3), 'fewer after a later position')
    })

    t.test('an event stored under an old name is read under the new one, by readStream and readAll', async (t) => {
      const reader = await subject.upcasting(upcasterFrom({ renames: { ContractOldName: 'ContractNewName' } }))
      const s = stream('renamed')
      const before = await store.headPosition()
      await store.append(s, [event('ContractOldName', 1), event('ContractNewName', 2), event('Other', 3)], 'no_stream')
      t.same((await reader.readStream(s)).map((e) => [e.type, e.schemaVersion, (e.data as any).n]), [['ContractNewName', 1, 1], ['ContractNewName', 1, 2], ['Other', 1, 3]])
      const { events } = await readAllOf(reader, before, [s], 3, 100)
      t.same(events.map((e) => e.type), ['ContractNewName', 'ContractNewName', 'Other'])
      t.same((await store.readStream(s)).map((e) => e.type), ['ContractOldName', 'ContractNewName', 'Other'], 'the store keeps the name it was written under')
    })

    t.test('two concurrent appends at the same expected version: exactly one wins', async (t) => {
      for (const expected of ['no_stream', 1] as const) {
        const s = stream('race')
        if (expected === 1) await store.append(s, [event('Seed', 0)], 'no_stream')
        const results = await Promise.allSettled([
          store.append(s, [event('Left', 1)], expected),
          store.append(s, [event('Right', 2)], expected),
        ])
        const won = results.filter((r) => r.status === 'fulfilled')
        const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
        t.equal(won.length, 1, `expected ${expected}: one append wins`)
        t.equal(lost.length, 1, `expected ${expected}: one append loses`)
        t.type(lost[0]?.reason, ConcurrencyError, 'the loser gets a ConcurrencyError')
        t.equal((await store.readStream(s)).length, expected === 1 ? 2 : 1, 'the loser wrote nothing')
      }
    })

    t.test('a repeated event id appends nothing', async (t) => {
      const s = stream('dedupe')
      const ids = [randomUUID(), randomUUID()]
      const first = await store.append(s, [event('Once', 1, ids[0]), event('Once', 2, ids[1])], 'no_stream')
      const retry = await store.append(s, [event('Once', 1, ids[0]), event('Once', 2, ids[1])], 'no_stream')
      t.equal(retry.appended, false, 'a retried append at the same expected version is recognised')
      t.equal(retry.nextVersion, 2)
      t.equal(store.comparePositions(retry.position, first.position), 0, 'and reports the first copy\'s position')
      const again = await store.append(s, [event('Once', 1, ids[0]), event('Once', 2, ids[1])], 'any')
      t.equal(again.appended, false, 'also with expected version any')
      const events = await store.readStream(s)
      t.same(events.map((e) => e.id), ids, 'the stream holds each id once')
      const head = await store.headPosition()
      t.equal(store.comparePositions(head, first.position) >= 0, true)
    })

    t.test('appendMany writes several streams atomically: all of them or none', async (t) => {
      const [a, b, taken] = [stream('many-a'), stream('many-b'), stream('many-taken')]
      const results = await store.appendMany([
        { streamId: a, events: [event('Reserved', 1)], expected: 'no_stream' },
        { streamId: b, events: [event('Created', 2), event('Noted', 3)], expected: 'no_stream' },
      ])
      t.same(results.map((r) => [r.appended, r.nextVersion]), [[true, 1], [true, 2]], 'one result per stream, in order')
      t.same((await store.readStream(b)).map((e) => (e.data as any).n), [2, 3])
      await store.append(taken, [event('Seed', 0)], 'no_stream')
      const fresh = stream('many-fresh')
      const err = await rejection(store.appendMany([
        { streamId: fresh, events: [event('Reserved', 4)], expected: 'no_stream' },
        { streamId: taken, events: [event('Created', 5)], expected: 'no_stream' },
      ]))
      t.type(err, ConcurrencyError)
      t.equal((err as ConcurrencyError).streamId, taken, 'the conflict names the stream that refused')
      t.same(await store.readStream(fresh), [], 'the other stream of the refused write was not written')
      t.equal((await store.readStream(taken)).length, 1)
    })

    t.test('concurrent appendMany calls racing for one stream: one whole write wins', async (t) => {
      const claim = stream('many-claim')
      const own = Array.from({ length: 12 }, (_, i) => stream(`many-own-${i}`))
      const results = await Promise.allSettled(own.map((s, i) => store.appendMany([
        { streamId: s, events: [event('Own', i)], expected: 'no_stream' },
        { streamId: claim, events: [event('Claimed', i)], expected: 'no_stream' },
      ])))
      const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []))
      t.equal(won.length, 1, 'exactly one write wins the claim')
      t.ok(results.every((r) => r.status === 'fulfilled' || r.reason instanceof ConcurrencyError), 'the others get a ConcurrencyError')
      const written = await Promise.all(own.map(async (s) => (await store.readStream(s)).length))
      t.same(written, own.map((_, i) => (i === won[0] ? 1 : 0)), 'only the winner\'s own stream was written')
      t.same((await store.readStream(claim)).map((e) => (e.data as any).n), [won[0]])
    })

    t.test('onAppended wakes a subscriber', async (t) => {
      let calls = 0
      const woken = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 5000)
        const off = store.onAppended(() => { calls++; clearTimeout(timer); off(); resolve(true) })
      })
      await store.append(stream('wake'), [event('Wake', 1)], 'no_stream')
      t.equal(await woken, true, 'the listener ran after the append')
      t.ok(calls >= 1)
      let after = 0
      const off = store.onAppended(() => { after++ })
      off()
      await store.append(stream('wake'), [event('Wake', 2)], 'no_stream')
      await new Promise((r) => setTimeout(r, 100))
      t.equal(after, 0, 'an unsubscribed listener is not called')
    })

    t.test('out-of-order commit race: a subscriber never skips the late committer', async (t) => {
      if (!subject.holdAppend) {
        t.comment(`out-of-order commit race NOT RUN on this adapter: ${subject.noRaceReason ?? 'no second connection'}`)
        t.pass('race not applicable here (see comment)')
        return
      }
      const hold = subject.holdAppend

      t.test('A takes its position first, B commits, then A commits', async (t) => {
        const from = await store.headPosition()
        const sa = stream('late-a')
        const sb = stream('late-b')
        const a = await hold(sa)
        const b = await hold(sb)
        await b.commit()
        const whileOpen = await store.readAll(from, 100)
        const seen = whileOpen.events.filter((e) => e.streamId === sa || e.streamId === sb)
        t.same(seen, [], 'with A still open, the xmin rule hides B (B\'s transaction id is above the snapshot xmin)')
        t.equal(whileOpen.checkpoint, from, 'so the checkpoint does not move past A')
        await a.commit()
        const { events } = await readAllOf(store, whileOpen.checkpoint, [sa, sb], 2)
        t.same(events.map((e) => e.streamId), [sa, sb], 'after A commits the subscriber reads A then B')
        t.equal(store.comparePositions(events[0]!.position, events[1]!.position), -1, 'in (transaction id, position) order')
      })

      t.test('A takes its transaction id first but inserts after B commits', async (t) => {
        const from = await store.headPosition()
        const sa = stream('late-a2')
        const sb = stream('late-b2')
        const a = await hold(sa, { takeIdOnly: true })
        const b = await hold(sb)
        await b.commit()
        await a.insertNow()
        t.same((await store.readAll(from, 100)).events.filter((e) => e.streamId === sa || e.streamId === sb), [],
          'B is hidden while the older transaction A is open')
        await a.commit()
        const { events } = await readAllOf(store, from, [sa, sb], 2)
        t.same(events.map((e) => e.streamId), [sa, sb], 'A (older transaction, higher position) comes first')
        const posOf = (e: RecordedEvent) => Number(e.position.split('/')[1])
        t.ok(posOf(events[0]!) > posOf(events[1]!), 'even though A\'s global position is higher than B\'s')
      })

      t.test('a subscriber polling through the race sees every event exactly once', async (t) => {
        const from = await store.headPosition()
        const streams = [stream('poll-a'), stream('poll-b'), stream('poll-c')]
        let checkpoint: string = from
        const seen: RecordedEvent[] = []
        const poll = async () => {
          const page = await store.readAll(checkpoint, 100)
          seen.push(...page.events.filter((e) => streams.includes(e.streamId)))
          checkpoint = page.checkpoint
        }
        const a = await hold(streams[0]!)
        await poll()
        const b = await hold(streams[1]!)
        await b.commit()
        await poll()
        await store.append(streams[2]!, [event('C', 3)], 'no_stream')
        await poll()
        t.same(seen, [], 'nothing is read past the open transaction')
        await a.commit()
        for (let i = 0; i < 500 && seen.length < 3; i++) { await poll(); await new Promise((r) => setTimeout(r, 20)) }
        for (let i = 0; i < 3; i++) await poll()
        t.same(seen.map((e) => e.streamId), streams, 'A, B and C once each, A first')
      })

      t.test('a rolled-back transaction releases the readers', async (t) => {
        const from = await store.headPosition()
        const sa = stream('rolled-a')
        const sb = stream('rolled-b')
        const a = await hold(sa)
        const b = await hold(sb)
        await b.commit()
        await a.rollback()
        const { events } = await readAllOf(store, from, [sa, sb], 1)
        t.same(events.map((e) => e.streamId), [sb], 'B is read once A is gone; A never appears')
      })
    })
  })
}
