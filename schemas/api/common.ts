import { Type, type TSchema } from 'typebox'

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])

/**
 * A closed set that the command checks rather than the schema, so that its error joins the
 * command's other field errors in one 422 (a carrier status and the reason it requires): validated
 * as a string, documented as the enum it is (src/http/openapi/components.ts reads `x-checked-enum`).
 */
export const CheckedEnum = (values: readonly string[], options: { maxLength: number; title?: string; description?: string }) =>
  Type.String({ ...options, 'x-checked-enum': values })

/**
 * A whole number ≥ 0 in a path or query string, written as the server writes it: decimal digits,
 * no sign, no leading zero (but `0` itself), no spaces, exponent or hex. An integer schema would
 * coerce `0x10`, `1e3`, ` ` or `0060` into a number, so one value would have many spellings. The
 * handler reads it with Number(); validation.ts names the rule when the pattern fails.
 */
export const DECIMAL_INTEGER_PATTERN = '^(0|[1-9][0-9]*)$'
export const DecimalInteger = (description?: string) =>
  Type.String({ pattern: DECIMAL_INTEGER_PATTERN, ...(description ? { description } : {}) })

export const ErrorResponse = Type.Object({
  message: Type.String(),
  code: Type.String({ description: 'snake_case error code' }),
}, { title: 'ApiError' })

export const ValidationErrorResponse = Type.Object({
  message: Type.String(),
  errors: Type.Record(Type.String(), Type.Array(Type.String()), { description: 'dot path from the request root → messages' }),
}, { title: 'ValidationError' })

export const PaginationMeta = Type.Object({
  total: Type.Integer(),
  per_page: Type.Integer(),
  current_page: Type.Integer(),
  last_page: Type.Integer(),
  from: Nullable(Type.Integer()),
  to: Nullable(Type.Integer()),
}, { title: 'PaginationMeta' })

export const PaginationLinks = Type.Object({
  first: Nullable(Type.String()),
  last: Nullable(Type.String()),
  prev: Nullable(Type.String()),
  next: Nullable(Type.String()),
}, { title: 'PaginationLinks' })

/** Error responses every authenticated endpoint documents. */
export const errorResponses = {
  401: ErrorResponse,
  403: ErrorResponse,
  409: ErrorResponse,
  422: ValidationErrorResponse,
}

/** `perPage` and `page` of a paginated listing's query (spec "Pagination of listings"). */
export const pageQuery = (defaultPerPage = 20) => ({
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: defaultPerPage })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
})

/** The keyset cursor of a flat listing (issue 32): opaque, from `links.next`. */
export const ListingCursor = Type.Optional(Type.String({ maxLength: 200, pattern: '^[A-Za-z0-9_-]+$', description: 'opaque: from `links.next`; the page after the one that gave it (its page number travels in it)' }))

/** A page of a listing: `{data, links, meta}`, named `title` in the OpenAPI document. */
export const Page = <T extends TSchema>(item: T, title: string) => Type.Object({ data: Type.Array(item), links: PaginationLinks, meta: PaginationMeta }, { title })
