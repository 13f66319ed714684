/**
 * How the NATS adapter lays the bus's subjects out on the wire: a partition token after the root,
 * `events.task.TaskStarted` keyed by `task-01K…` travels as `events.p7.task.TaskStarted`. The
 * partition is a hash of the message key (the event's stream), so every message of one stream is in
 * one partition, and an ordered consumer reads each partition through a durable consumer of its own.
 * Consumers see the subject without the token.
 */

/** FNV-1a, 32 bits: the same partition for a key in every process. */
export function partitionOf(key: string, partitions: number): number {
  let h = 0x811c9dc5
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0) % partitions
}

export const partitionToken = (k: number): string => `p${k}`

/** `events.task.TaskStarted` in partition 7 → `<prefix>events.p7.task.TaskStarted`. */
export function wireSubject(prefix: string, subject: string, partition: number): string {
  const dot = subject.indexOf('.')
  return `${prefix}${subject.slice(0, dot)}.${partitionToken(partition)}${subject.slice(dot)}`
}

/** The subject without its partition token (a wire subject without the prefix). */
export function unpartitioned(wire: string): string {
  const tokens = wire.split('.')
  return tokens.length > 2 && /^p\d+$/.test(tokens[1]!) ? [tokens[0], ...tokens.slice(2)].join('.') : wire
}

/** A pattern on the wire: the partition's token (or any partition) after its root. */
function wirePattern(prefix: string, pattern: string, partition: number | undefined): string {
  const tokens = pattern.split('.')
  const part = partition === undefined ? '*' : partitionToken(partition)
  return `${prefix}${[tokens[0], part, ...tokens.slice(1)].join('.')}`
}

/**
 * The one server-side filter of a consumer of `patterns` (in one partition, or all): the pattern
 * itself when there is one, else its root (`events.>`), which the adapter narrows by matching each
 * message; undefined (the whole stream) when the patterns have different roots, which an ordered
 * consumer may not.
 */
export function wireFilter(prefix: string, patterns: string[], partition?: number): string | undefined {
  if (patterns.length === 1) return wirePattern(prefix, patterns[0]!, partition)
  const roots = new Set(patterns.map((p) => p.split('.')[0]!))
  const [root] = roots
  if (roots.size === 1 && root !== '*' && root !== '>') return wirePattern(prefix, `${root}.>`, partition)
  if (partition !== undefined) throw new Error('an ordered consumer\'s subjects must share their first token')
  return undefined
}
