import Ajv from 'ajv'
import addFormats from 'ajv-formats'

/** ajv-formats' own `date-time` check (RFC 3339), from an instance of its own. */
const rfc3339 = addFormats.default(new Ajv.default()).compile({ type: 'string', format: 'date-time' })

// The first and last instants an answer can write back in RFC 3339's four-digit years, and the
// database store: PostgreSQL has no year 0, and toISOString writes a year before 1 as `-000001`.
const FIRST = Date.parse('0001-01-01T00:00:00.000Z')
const LAST = Date.parse('9999-12-31T23:59:59.999Z')

/**
 * `date-time` as the server can use it: RFC 3339, and an instant JavaScript can hold within those
 * years. RFC 3339 alone lets through a leap second (`23:59:60`, which Date cannot parse: a 500 when
 * the handler wrote it back) and year 0000 (refused later by the database, as a 422 naming no field).
 */
export const dateTimeInstant = (value: string): boolean => {
  if (!rfc3339(value)) return false
  const ms = Date.parse(value)
  return ms >= FIRST && ms <= LAST
}
