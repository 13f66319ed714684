import { ContractsQuery, ContractsResponse, OrganizationEnvelope, PlaceList } from '../../schemas/api/organizations.js'
import { errorResponses } from '../../schemas/api/common.js'
import { organizationOf } from '../http/plugins/auth.js'
import type { RoutesPlugin } from '../http/module.js'
import { readsOf } from '../http/request-reads.js'
import { pageOf, pageRequest } from '../http/pagination.js'
import { listPlaces, toOrganization, toPlace } from './queries.js'
import { contractSortOf, contractsCursorKey, contractsNextCursor, listContracts, type ContractQuery } from './contract-listing.js'

/** The caller's own organization, its places and the organizations it has contracts with. */
export const myOrganizationRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/organizations/my', {
    schema: { tags: ['organizations'], summary: 'The organization of the token', response: { 200: OrganizationEnvelope, ...errorResponses } },
  }, async (req) => ({
    // The row authentication loaded (or its cache holds, kept current: src/http/auth-cache.ts).
    organization: toOrganization(organizationOf(req)),
  }))

  app.get('/organizations/my/places', {
    schema: { tags: ['organizations'], summary: 'Saved places', response: { 200: PlaceList, ...errorResponses } },
  }, async (req) => ({ places: (await listPlaces(platform.rm, organizationOf(req).id)).map(toPlace) }))

  app.get('/organizations/my/contracts', {
    schema: { tags: ['organizations'], summary: 'Organizations with an active contract with the caller', querystring: ContractsQuery, response: { 200: ContractsResponse, ...errorResponses } },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const q = req.query
    const paging = pageRequest(q, 10)
    const query: ContractQuery = { license: q.license ?? 'shipper', filter: q['filter[global]'], sort: contractSortOf(q.sort) }
    // Flat at any number of contracts (contract-listing.ts): links.next seeks from the page's last row.
    const reads = readsOf(platform, reply).rm
    const after = await contractsCursorKey(reads, org.id, query, q.cursor, paging)
    const listed = await listContracts(reads, org.id, query, paging, after)
    const keyset = { next: contractsNextCursor(listed.hasMore, listed.last, query.sort, paging.page) }
    return { organizations: { data: listed.rows.map(toOrganization), ...pageOf(req, paging, listed.total, listed.rows.length, keyset) } }
  })
}
