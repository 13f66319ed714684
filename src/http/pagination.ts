import type { FastifyRequest } from 'fastify'
import { publicUrl } from './public-url.js'

export interface PageRequest { perPage: number; page: number }

/**
 * The `links` and `meta` of a paginated listing (spec "Pagination of listings"): `from`/`to` are
 * 1-based indexes of the page's first and last record (null on an empty page), and each link is the
 * request's own URL with another `page` (its origin from publicUrl: `PUBLIC_BASE_URL` or the request's).
 */
export function pageOf(req: FastifyRequest, { perPage, page }: PageRequest, total: number, count: number, keyset?: Keyset) {
  const lastPage = Math.max(1, Math.ceil(total / perPage))
  const url = (p: number, cursor?: string) => {
    const u = new URL(publicUrl(req, req.url))
    u.searchParams.set('page', String(p))
    // Only `next` seeks from this page's last row; every other link is a page number.
    if (cursor === undefined) u.searchParams.delete('cursor')
    else u.searchParams.set('cursor', cursor)
    return u.toString()
  }
  const from = count ? (page - 1) * perPage + 1 : null
  const next = keyset ? (keyset.next === undefined ? null : url(page + 1, keyset.next)) : page < lastPage ? url(page + 1) : null
  return {
    links: { first: url(1), last: url(lastPage), prev: page > 1 ? url(Math.min(page - 1, lastPage)) : null, next },
    meta: { total, per_page: perPage, current_page: page, last_page: lastPage, from, to: from === null ? null : from + count - 1 },
  }
}

/**
 * A keyset listing's next page: `next` is the cursor after this page's last row, undefined when no
 * row follows it (then `links.next` is null, whatever `last_page` says: rows may arrive meanwhile).
 */
export interface Keyset { next: string | undefined }

/** `perPage` and `page` of a listing's query, with the listing's default page size. */
export const pageRequest = (q: { perPage?: number | undefined; page?: number | undefined }, defaultPerPage = 20): PageRequest =>
  ({ perPage: q.perPage ?? defaultPerPage, page: q.page ?? 1 })
