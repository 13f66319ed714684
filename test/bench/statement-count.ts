import pg from 'pg'

/**
 * Counts the SQL statements this process sends to PostgreSQL (every `pg` client: the pools, the
 * projector's, the relay's), as `log_statement = all` would list them: one per query sent, a string
 * of several sent at once counting once. `top` groups them by their first words.
 */
export function countStatements() {
  if (process.env['BENCH_STACKS']) Error.stackTraceLimit = 60
  const counts = new Map<string, number>()
  let total = 0
  const original = pg.Client.prototype.query
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const q = args[0]
    const text = typeof q === 'string' ? q : (q as { text?: string } | null)?.text ?? ''
    const flat = text.replace(/\s+/g, ' ').trim()
    const where = flat.indexOf(' where ')
    const key = where > 0 ? `${flat.slice(0, 45)} … ${flat.slice(where, where + 45)}` : flat.slice(0, 90)
    const traced = process.env['BENCH_STACKS'] && flat.includes(process.env['BENCH_STACKS']) ? new Error().stack!.split('\n').slice(2)
      .map((l) => l.trim()).filter((l) => /\/(src|projections)\//.test(l) && !/event-store\/|database\//.test(l)).slice(0, 2)
      .map((l) => l.replace(/^at /, '').replace(/\(.*\/(src|projections)\//, '($1/')).join(' < ') : ''
    counts.set(traced ? `${key} @ ${traced}` : key, (counts.get(traced ? `${key} @ ${traced}` : key) ?? 0) + 1)
    total++
    return (original as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof original
  return {
    get total() { return total },
    reset() { counts.clear(); total = 0 },
    top(n = 12) { return [...counts].sort((a, b) => b[1] - a[1]).slice(0, n) },
    restore() { pg.Client.prototype.query = original },
  }
}
