import t from 'tap'
import { ConcurrencyError, type ExpectedVersion } from '../../src/shared/concurrency.js'
import { handleCommandFromRow, type CommandContext, type CommandDeps } from '../../src/shared/command-handler.js'
import type { Decider } from '../../src/shared/decider.js'
import type { AppendResult, EventStore, NewEvent, RecordedEvent, StreamAppend } from '../../src/infrastructure/event-store/event-store.js'

/**
 * The row fast path, once for every runner (issue 35 point 2): the row decides and the append
 * expects its version; a refusal or a conflict on it goes to the stream, which decides the answer
 * and the error; several streams go in one atomic append.
 */

type Event = { type: 'Counted'; data: { n: number } }
interface Count { type: 'Count'; data: { upTo: number } }
/** A counter that counts up to a limit: refused past it, nothing to do at it. */
const decider: Decider<number, Count, Event> = {
  initialState: () => 0,
  evolve: (s, e) => s + e.data.n,
  decide: (c, s) => {
    if (s > c.data.upTo) throw new Error('past the limit')
    return s === c.data.upTo ? [] : [{ type: 'Counted', data: { n: 1 } }]
  },
}

/** Streams in memory, with the compare-and-set the real stores do; `conflicts` makes the next appends lose. */
function memoryStore() {
  const streams = new Map<string, RecordedEvent[]>()
  let position = 0
  const log = { reads: [] as string[], writes: [] as StreamAppend[][], conflicts: 0 }
  const check = (a: StreamAppend) => {
    const version = streams.get(a.streamId)?.length ?? 0
    const ok = a.expected === 'any' || (a.expected === 'no_stream' ? version === 0 : a.expected === version)
    if (!ok) throw new ConcurrencyError(a.streamId, a.expected, version)
  }
  const write = (a: StreamAppend): AppendResult => {
    const list = streams.get(a.streamId) ?? []
    for (const e of a.events) list.push({ ...e, streamId: a.streamId, position: String(++position) } as unknown as RecordedEvent)
    streams.set(a.streamId, list)
    return { position: String(position) } as AppendResult
  }
  const appendMany = async (appends: StreamAppend[]): Promise<AppendResult[]> => {
    log.writes.push(appends)
    if (log.conflicts > 0) { log.conflicts--; throw new ConcurrencyError(appends[0]!.streamId, appends[0]!.expected, undefined) }
    appends.forEach(check)
    return appends.map(write)
  }
  const store = {
    readStream: async (id: string) => { log.reads.push(id); return [...(streams.get(id) ?? [])] },
    append: async (streamId: string, events: NewEvent[], expected: ExpectedVersion) => (await appendMany([{ streamId, events, expected }]))[0]!,
    appendMany,
    comparePositions: (a: string, b: string) => Number(a) - Number(b),
  }
  const seed = (id: string, n: number) => { for (let i = 0; i < n; i++) write({ streamId: id, events: [{ type: 'Counted', data: { n: 1 } } as NewEvent], expected: 'any' }) }
  return { deps: { store: store as unknown as EventStore } satisfies CommandDeps, log, seed }
}

const ctx: CommandContext = { now: new Date('2026-01-01T00:00:00Z'), actor: { kind: 'system', id: 'test' } }
const count = (upTo: number) => (): Count => ({ type: 'Count', data: { upTo } })

t.test('the row decides: one append expecting its version, no stream read, the state folded forward', async (t) => {
  const { deps, log, seed } = memoryStore()
  seed('c-1', 2)
  const r = await handleCommandFromRow(deps, { streamId: 'c-1', decider, command: count(5), row: { state: 2, version: 2 } }, ctx)
  t.equal(r.from, 'row')
  t.equal(r.state, 3)
  t.same(r.events, [{ type: 'Counted', data: { n: 1 } }])
  t.same(log.reads, [])
  t.same(log.writes.map((w) => w.map((a) => [a.streamId, a.expected])), [[['c-1', 2]]])
})

t.test('nothing to do on the row: no write', async (t) => {
  const { deps, log } = memoryStore()
  const r = await handleCommandFromRow(deps, { streamId: 'c-1', decider, command: count(2), row: { state: 2, version: 2 } }, ctx)
  t.same([r.from, r.events, log.writes.length, log.reads.length], ['row', [], 0, 0])
})

t.test('a refusal on the row goes to the stream, which decides', async (t) => {
  const { deps, log, seed } = memoryStore()
  seed('c-1', 1)
  const seen: string[] = []
  const r = await handleCommandFromRow(deps, {
    streamId: 'c-1', decider, row: { state: 9, version: 9 },
    command: (state, from) => { seen.push(`${from}:${state}`); return count(5)() },
  }, ctx)
  t.same(seen, ['row:9', 'stream:1'])
  t.same([r.from, r.state, log.reads], ['stream', 2, ['c-1']])
})

t.test('a stale row (a conflict) goes to the stream; a refusal there is the error', async (t) => {
  const { deps, seed } = memoryStore()
  seed('c-1', 4)
  const r = await handleCommandFromRow(deps, { streamId: 'c-1', decider, command: count(5), row: { state: 1, version: 1 } }, ctx)
  t.same([r.from, r.state], ['stream', 5])
  await t.rejects(handleCommandFromRow(deps, { streamId: 'c-1', decider, command: count(3), row: { state: 1, version: 1 } }, ctx), /past the limit/)
})

t.test('several streams in one atomic append, expecting the version the path read', async (t) => {
  const { deps, log, seed } = memoryStore()
  seed('c-1', 3)
  const appends = (events: Event[], expected: ExpectedVersion) => [
    { streamId: 'c-1', events, expected },
    { streamId: 'marks-1', events: [{ type: 'Marked', data: {} }], expected: 'any' as const },
  ]
  await handleCommandFromRow(deps, { streamId: 'c-1', decider, command: count(9), row: { state: 0, version: 0 }, appends }, ctx)
  t.same(log.writes.map((w) => w.map((a) => [a.streamId, a.expected])), [
    [['c-1', 0], ['marks-1', 'any']],
    [['c-1', 3], ['marks-1', 'any']],
  ])
})

t.test('conflicts on the stream: tries up to maxAttempts with the pauses asked, then the caller\'s error', async (t) => {
  const { deps, log } = memoryStore()
  log.conflicts = 100
  const pauses: number[] = []
  await t.rejects(handleCommandFromRow(deps, { streamId: 'c-1', decider, command: count(5), row: undefined }, ctx, {
    maxAttempts: 3, pauseMs: (attempt) => { pauses.push(attempt); return 0 }, exhausted: () => new Error('kept changing'),
  }), /kept changing/)
  t.equal(log.reads.length, 3)
  t.same(pauses, [1, 2])
  log.conflicts = 100
  await t.rejects(handleCommandFromRow(deps, { streamId: 'c-1', decider, command: count(5), row: undefined }, ctx), { code: 'concurrency_conflict' })
  t.equal(log.reads.length, 3 + 5, 'five tries by default, then the ConcurrencyError itself')
})
