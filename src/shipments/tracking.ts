import type { Static } from 'typebox'
import { BulkTrackingBody, BulkTrackingResponse, ShipmentIdParams, TrackingItem, TrackingResponse } from '../../schemas/api/shipments.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { organizationOf } from '../http/plugins/auth.js'
import type { Platform } from '../platform.js'
import { requireVisibleShipment } from './shipment-view.js'
import { statusOverrides, visibleTo } from './queries.js'
import { catalogEntry, type Overrides } from './status-catalog.js'
import type { RoutesPlugin } from '../http/module.js'
import { iso } from '../shared/rows.js'

/** Tracking history from `shipment_status_history`, oldest first, names from the viewer's catalog. */


async function historyOf(platform: Platform, ids: number[], overrides: Overrides) {
  const rows = ids.length
    ? await platform.rm.selectFrom('shipment_status_history').selectAll().where('shipment_id', 'in', ids)
      .orderBy('shipment_id').orderBy('stream_version').execute()
    : []
  const out = new Map<number, Static<typeof TrackingItem>[]>()
  for (const r of rows) {
    const s = catalogEntry(r.status, overrides)
    const sub = r.substatus ? catalogEntry(r.substatus, overrides) : null
    const list = out.get(Number(r.shipment_id)) ?? []
    list.push({
      status: { code: s.code, name: s.name, color: s.color }, substatus: sub ? { code: sub.code, name: sub.name } : null,
      carrier_status: r.carrier_status, reason: r.reason, message: r.message,
      occurred_at: iso(r.occurred_at), recorded_at: iso(r.recorded_at), source: r.source, signed_by: r.signed_by ?? null,
    })
    out.set(Number(r.shipment_id), list)
  }
  return out
}

export const trackingRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/shipments/:id/tracking', {
    schema: {
      tags: ['shipments'], summary: 'Tracking history of a shipment',
      params: ShipmentIdParams, response: { 200: TrackingResponse, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const { id } = req.params
    const row = await requireVisibleShipment(platform, org.id, id)
    const history = await historyOf(platform, [id], await statusOverrides(platform.rm, org.id))
    return { tracking_number: row.tracking_number, tracking_url: row.tracking_url, tracking: history.get(id) ?? [] }
  })

  app.post('/shipments/tracking/bulk', {
    schema: {
      tags: ['shipments'],
      summary: 'Tracking of up to 100 shipments; ids the caller cannot see are left out',
      body: BulkTrackingBody, response: { 200: BulkTrackingResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const { shipment_ids } = req.body
    const visible = await platform.rm.selectFrom('shipments as s').select('s.id').where('s.id', 'in', shipment_ids).where(visibleTo(org.id)).execute()
    const ids = new Set(visible.map((r) => Number(r.id)))
    const history = await historyOf(platform, [...ids], await statusOverrides(platform.rm, org.id))
    return { tracking: shipment_ids.filter((id) => ids.has(id)).map((id) => ({ shipment_id: id, tracking: history.get(id) ?? [] })) }
  })
}
