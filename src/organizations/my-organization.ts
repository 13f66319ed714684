import type { FastifyInstance } from 'fastify'
import { ContractsQuery, type ContractsQuery as Query, ContractsResponse, Organization, Place } from '../../schemas/api/organizations.js'
import { errorResponses } from '../../schemas/api/common.js'
import { organizationOf } from '../http/plugins/auth.js'
import type { Platform } from '../platform.js'
import { contractedOrganizations, listPlaces, toOrganization, toPlace } from './queries.js'

/** The caller's own organization, its places and the organizations it has contracts with. */
export async function myOrganizationRoutes(app: FastifyInstance, { platform }: { platform: Platform }) {
  app.get('/organizations/my', {
    schema: { tags: ['organizations'], summary: 'The organization of the token', response: { 200: { type: 'object', properties: { organization: Organization } }, ...errorResponses } },
  }, async (req) => ({
    // The row authentication loaded (or its cache holds, kept current: src/http/auth-cache.ts).
    organization: toOrganization(organizationOf(req)),
  }))

  app.get('/organizations/my/places', {
    schema: { tags: ['organizations'], summary: 'Saved places', response: { 200: { type: 'object', properties: { places: { type: 'array', items: Place } } }, ...errorResponses } },
  }, async (req) => ({ places: (await listPlaces(platform, organizationOf(req).id)).map(toPlace) }))

  app.get('/organizations/my/contracts', {
    schema: { tags: ['organizations'], summary: 'Organizations with an active contract with the caller', querystring: ContractsQuery, response: { 200: ContractsResponse, ...errorResponses } },
  }, async (req) => {
    const org = organizationOf(req)
    const q = req.query as Query
    const perPage = q.perPage ?? 10
    const page = q.page ?? 1
    const { rows, total } = await contractedOrganizations(platform, org.id, {
      license: q.license ?? 'shipper', filter: q['filter[global]'], sort: q.sort, perPage, page,
    })
    const lastPage = Math.max(1, Math.ceil(total / perPage))
    const url = (p: number) => {
      const u = new URL(req.url, `${req.protocol}://${req.headers.host ?? 'localhost'}`)
      u.searchParams.set('page', String(p))
      return u.toString()
    }
    const from = rows.length ? (page - 1) * perPage + 1 : null
    return {
      organizations: {
        data: rows.map(toOrganization),
        links: { first: url(1), last: url(lastPage), prev: page > 1 ? url(Math.min(page - 1, lastPage)) : null, next: page < lastPage ? url(page + 1) : null },
        meta: { total, per_page: perPage, current_page: page, last_page: lastPage, from, to: from === null ? null : from + rows.length - 1 },
      },
    }
  })
}
