import { Buffer } from 'node:buffer'
import { randomBytes } from 'node:crypto'

/**
 * What a projection round changed, told to whoever keeps copies of read-model rows (the request
 * path's caches), two ways, both sent by the runner once per round:
 * - in-process, before the round commits (`ReadModelChanges.announce`), so the process whose runner
 *   applied the round stops serving those rows before any write waiting on that round is answered;
 * - a NOTIFY on `READ_MODEL_CHANGED_CHANNEL` at the commit, to every process (this one included).
 * Both carry the same batch token: the NOTIFY settles exactly the announcement of its own round.
 * Projections name what changed with `ProjectionContext.changed(topic, keys)`; the topics are theirs.
 */
export const READ_MODEL_CHANGED_CHANNEL = 'read_model_changed'

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more; topics that do not fit go as "whole". */
export const MAX_NOTICE_BYTES = 7_900

export type ChangeKey = string | number

export interface ChangeNotice {
  /** Unique per round (per-process prefix + counter). */
  batch: string
  /** The changed keys per topic. */
  keys: Record<string, ChangeKey[]>
  /** Topics whose every row may have changed (too many keys for one NOTIFY). */
  whole: string[]
  /** Anything may have changed: an unreadable notice, or LISTEN reconnected and notices were lost. */
  everything: boolean
}

/** A topic's changed keys, or 'all'. */
export function changedKeys(n: ChangeNotice, topic: string): readonly ChangeKey[] | 'all' {
  if (n.everything || n.whole.includes(topic)) return 'all'
  return n.keys[topic] ?? []
}

const processTag = randomBytes(4).toString('hex')
let rounds = 0
export const nextBatchToken = (): string => `${processTag}.${++rounds}`

/** Collects a round's changes from its projections. */
export class RoundChanges {
  private readonly keys = new Map<string, Set<ChangeKey>>()

  add(topic: string, keys: Iterable<ChangeKey>): void {
    let set = this.keys.get(topic)
    for (const k of keys) {
      if (!set) this.keys.set(topic, (set = new Set()))
      set.add(k)
    }
  }

  /** The round's notice; undefined when it changed nothing. */
  notice(): ChangeNotice | undefined {
    if (this.keys.size === 0) return undefined
    const keys: Record<string, ChangeKey[]> = {}
    for (const [topic, set] of this.keys) keys[topic] = [...set]
    return { batch: nextBatchToken(), keys, whole: [], everything: false }
  }
}

/** JSON; the topics with the most keys become "whole" until it fits in one NOTIFY. */
export function encodeChangeNotice(n: ChangeNotice): string {
  if (n.everything) return JSON.stringify({ b: n.batch, e: 1 })
  const keys = { ...n.keys }
  const whole = [...n.whole]
  for (;;) {
    const text = JSON.stringify({ b: n.batch, k: keys, w: whole })
    if (Buffer.byteLength(text) <= MAX_NOTICE_BYTES) return text
    const biggest = Object.keys(keys).sort((a, b) => keys[b]!.length - keys[a]!.length)[0]
    if (biggest === undefined) return JSON.stringify({ b: n.batch, e: 1 })
    delete keys[biggest]
    whole.push(biggest)
  }
}

const isKey = (k: unknown): k is ChangeKey => typeof k === 'string' || (typeof k === 'number' && Number.isSafeInteger(k))
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const areStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((w) => typeof w === 'string')
const areKeyLists = (keys: Record<string, unknown>): keys is Record<string, ChangeKey[]> =>
  Object.values(keys).every((v) => Array.isArray(v) && v.every(isKey))

/** Anything it cannot read counts as "everything changed" (the empty payload of a LISTEN reconnect too). */
export function decodeChangeNotice(payload: string): ChangeNotice {
  let batch = ''
  try {
    const p: unknown = JSON.parse(payload)
    if (isRecord(p)) {
      if (typeof p.b === 'string') batch = p.b
      const keys = p.k
      const whole = p.w
      if (p.e === undefined && isRecord(keys) && areStrings(whole) && areKeyLists(keys)) {
        return { batch, keys, whole, everything: false }
      }
    }
  } catch { /* unreadable */ }
  return { batch, keys: {}, whole: [], everything: true }
}
