import { Type } from 'typebox'
import { StatusCatalogItem } from '../../schemas/api/shipments.js'
import { errorResponses } from '../../schemas/api/common.js'
import { organizationOf } from '../http/plugins/auth.js'
import { statusOverrides } from './queries.js'
import { catalogOf } from './status-catalog.js'
import type { RoutesPlugin } from '../http/module.js'

/**
 * The caller's status catalog: `GET /shipment-statuses` (the ten statuses, each with code, name,
 * hex colour and its substatuses). customize-status.ts changes it.
 */
export const statusCatalogRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/shipment-statuses', {
    schema: {
      tags: ['shipments'], summary: 'The organization\'s shipment status catalog',
      response: { 200: Type.Object({ statuses: Type.Array(StatusCatalogItem) }), ...errorResponses },
    },
  }, async (req) => ({ statuses: catalogOf(await statusOverrides(platform.rm, organizationOf(req).id)) }))
}
