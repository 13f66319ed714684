import { Type } from 'typebox'
import { CustomizeStatusBody, StatusCatalogItem, StatusCodeParams } from '../../schemas/api/shipments.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { handleCommand } from '../shared/command-handler.js'
import { NotFoundError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import { statusOverrides } from './queries.js'
import {
  STATUS_DEFAULTS, SUBSTATUSES_OF, catalogEntry, isCatalogCode, statusCatalogDecider, statusCatalogStream, type Overrides,
} from './status-catalog.js'
import type { RoutesPlugin } from '../http/module.js'

/**
 * The caller's status catalog: `GET /shipment-statuses` (the ten statuses, each with code, name,
 * hex colour and its substatuses) and `PATCH /shipment-statuses/{code}` `{name?, color?}` to rename
 * or recolour a status or a substatus for the caller's organization (null resets to the default).
 */

const catalogOf = (overrides: Overrides) => STATUS_DEFAULTS.map((s) => {
  const e = catalogEntry(s.code, overrides)
  return {
    ...e,
    substatuses: (SUBSTATUSES_OF[s.code] ?? []).map((c) => { const sub = catalogEntry(c, overrides); return { code: sub.code, name: sub.name } }),
  }
})

export const statusCatalogRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/shipment-statuses', {
    schema: {
      tags: ['shipments'], summary: 'The organization\'s shipment status catalog',
      response: { 200: Type.Object({ statuses: Type.Array(StatusCatalogItem) }), ...errorResponses },
    },
  }, async (req) => ({ statuses: catalogOf(await statusOverrides(platform, organizationOf(req).id)) }))

  app.patch('/shipment-statuses/:code', {
    schema: {
      tags: ['shipments'], summary: 'Rename or recolour a status (or substatus) for the organization',
      params: StatusCodeParams, body: CustomizeStatusBody,
      response: { 200: Type.Object({ success: Type.Boolean(), statuses: Type.Array(StatusCatalogItem) }), 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const { code } = req.params
    if (!isCatalogCode(code)) throw new NotFoundError('Shipment status')
    const body = req.body
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, statusCatalogStream(org.id), statusCatalogDecider, {
      type: 'CustomizeStatus',
      data: { organization_id: org.id, code, name: body.name, color: body.color, customized_at: ctx.now.toISOString() },
    }, ctx)
    return { success: true, statuses: catalogOf(await statusOverrides(platform, org.id)) }
  })
}
