import type { CompiledQuery } from 'kysely'
import pgUtils from 'pg/lib/utils'

/**
 * Several statements in one round trip. PostgreSQL's simple-query protocol takes a string of
 * statements and runs them as one implicit transaction (an error rolls back all of them and leaves
 * the connection clean), but it takes no bind parameters: each `$n` becomes a quoted literal of the
 * text node-postgres would have sent for it (its own `prepareValue`). A quoted literal is of
 * unknown type like an untyped parameter, so the statement means the same. Used where round trips
 * are the latency: the projector's round (checkpoint compare-and-set and every write).
 */
/** SQLSTATE of `require_row_count` (migration 2026-11-22T00-08): a one-trip transaction's guard failed. */
export const REQUIRED_ROW_COUNT_MISSED = 'RC001'

export function inlineStatements(queries: readonly CompiledQuery[]): string {
  return queries.map(inlineParameters).join(';\n')
}

export function inlineParameters(q: CompiledQuery): string {
  const { sql, parameters } = q
  if (!parameters.length) return sql
  let out = ''
  let from = 0
  let i = 0
  while (i < sql.length) {
    const c = sql.charCodeAt(i)
    if (c === 39 /* ' */ || c === 34 /* " */) {
      // A quoted literal or identifier: skip to its closing quote (a doubled quote stays inside).
      i = sql.indexOf(sql[i]!, i + 1)
      while (i !== -1 && sql.charCodeAt(i + 1) === c) i = sql.indexOf(sql[i]!, i + 2)
      if (i === -1) throw new Error('unterminated quote in a statement to inline')
      i++
      continue
    }
    // A comment could hide a quote from this scan, or swallow the `;` that joins statements: refuse.
    if ((c === 45 /* - */ && sql.charCodeAt(i + 1) === 45) || (c === 47 /* / */ && sql.charCodeAt(i + 1) === 42 /* * */)) {
      throw new Error('comment in a statement to inline')
    }
    if (c === 36 /* $ */) {
      let j = i + 1
      while (j < sql.length && sql.charCodeAt(j) >= 48 && sql.charCodeAt(j) <= 57) j++
      if (j > i + 1) {
        const n = Number(sql.slice(i + 1, j))
        if (n < 1 || n > parameters.length) throw new Error(`statement refers to missing parameter $${n}`)
        out += sql.slice(from, i) + literal(parameters[n - 1])
        from = i = j
        continue
      }
      // Dollar quoting ($tag$…$tag$) is never compiled by our builders: refuse rather than guess.
      if (!/[\w$]/.test(sql[i - 1] ?? ' ') && /^(?:[A-Za-z_]\w*)?\$/.test(sql.slice(i + 1, i + 65))) {
        throw new Error('dollar-quoted text in a statement to inline')
      }
    }
    i++
  }
  return out + sql.slice(from)
}

function literal(value: unknown): string {
  const v = pgUtils.prepareValue(value)
  if (v === null) return 'NULL'
  if (Buffer.isBuffer(v)) return `E'\\\\x${v.toString('hex')}'`
  // The E'' form reads the same whatever standard_conforming_strings says.
  return `E'${String(v).replace(/\\/g, '\\\\').replace(/'/g, "''")}'`
}
