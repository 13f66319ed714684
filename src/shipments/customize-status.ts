import { Type } from 'typebox'
import { CustomizeStatusBody, StatusCatalogItem, StatusCodeParams } from '../../schemas/api/shipments.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import type { Decider } from '../shared/decider.js'
import { handleCommand } from '../shared/command-handler.js'
import { ErrorBag, NotFoundError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { statusOverrides } from './queries.js'
import {
  catalogOf, evolveCatalog, HEX_COLOR, initialCatalogState, isCatalogCode, STATUS_NAME_MAX, statusCatalogStream,
  type CatalogState, type StatusCatalogEvent,
} from './status-catalog.js'

/** Rename or recolour a status or a substatus for the caller's organization (null resets to the default). */
export type CustomizeStatus = {
  type: 'CustomizeStatus'
  data: { organization_id: string; code: string; name?: string | null | undefined; color?: string | null | undefined; customized_at: string }
}

/** PATCH semantics: an absent field keeps its value, null resets it to the default; no change appends nothing. */
export function decide(command: CustomizeStatus, state: CatalogState): StatusCatalogEvent[] {
  const d = command.data
  const bag = new ErrorBag()
  if (!isCatalogCode(d.code)) bag.add('code', 'The selected code is not a shipment status or substatus.')
  if (typeof d.name === 'string' && (d.name.trim() === '' || d.name.trim().length > STATUS_NAME_MAX)) {
    bag.add('name', `The name must be between 1 and ${STATUS_NAME_MAX} characters.`)
  }
  if (typeof d.color === 'string' && !HEX_COLOR.test(d.color)) bag.add('color', 'The color must be a hex colour like #1E88E5.')
  bag.throwIfAny()
  const current = state.get(d.code) ?? { name: null, color: null }
  const next = {
    name: d.name === undefined ? current.name : d.name === null ? null : d.name.trim(),
    color: d.color === undefined ? current.color : d.color === null ? null : d.color.toUpperCase(),
  }
  if (next.name === current.name && next.color === current.color) return []
  return [{ type: 'ShipmentStatusCustomized', data: { organization_id: d.organization_id, code: d.code, ...next, customized_at: d.customized_at } }]
}

export const decider: Decider<CatalogState, CustomizeStatus, StatusCatalogEvent> = { decide, evolve: evolveCatalog, initialState: initialCatalogState }

export const customizeStatusRoutes: RoutesPlugin = async (app, { platform }) => {
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
    await handleCommand(platform.commands, statusCatalogStream(org.id), decider, {
      type: 'CustomizeStatus',
      data: { organization_id: org.id, code, name: body.name, color: body.color, customized_at: ctx.now.toISOString() },
    }, ctx)
    return { success: true, statuses: catalogOf(await statusOverrides(platform.rm, org.id)) }
  })
}
