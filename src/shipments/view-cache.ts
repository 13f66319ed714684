import { sql } from 'kysely'
import type { Shipment } from '../../schemas/api/shipments.js'
import type { Platform } from '../platform.js'
import { findShipmentViewWithCatalog, toShipment, visibleTo } from './queries.js'

/**
 * A per-process cache of rendered shipments for `GET /shipments/{id}`, never trusted blindly:
 * every hit is validated against the read model with one index lookup (the row's `change_seq`,
 * and the viewer's catalog version), so a write through any API process is seen at once
 * (read-your-writes holds across processes) and another tenant still gets a 404. Only the heavy
 * part (addresses, packages, JSON building) is skipped. Bounded (a few MB), least recently used out first.
 */

interface Entry { changeSeq: number; catalogVersion: string; shipment: Shipment }

export const VIEW_CACHE_SIZE = 2_000

export class ShipmentViewCache {
  private readonly entries = new Map<string, Entry>()
  constructor(private readonly platform: Platform, private readonly max = VIEW_CACHE_SIZE) {}

  private async versions(orgId: string, id: number) {
    return this.platform.rm.selectFrom('shipments as s')
      .select(['s.change_seq'])
      .select((eb) => eb.selectFrom('shipment_status_catalog as c')
        .select(sql<string>`coalesce(md5(string_agg(c.code || '|' || coalesce(c.name, '') || '|' || coalesce(c.color, ''), ',' order by c.code)), '')`.as('v'))
        .where('c.organization_id', '=', orgId).as('catalog_version'))
      .where('s.id', '=', id).where(visibleTo(orgId))
      .executeTakeFirst()
  }

  async get(orgId: string, id: number): Promise<Shipment | undefined> {
    const key = `${orgId}:${id}`
    const cached = this.entries.get(key)
    if (cached) {
      const v = await this.versions(orgId, id)
      if (!v) { this.entries.delete(key); return undefined }
      if (Number(v.change_seq) === cached.changeSeq && (v.catalog_version ?? '') === cached.catalogVersion) {
        this.entries.delete(key)
        this.entries.set(key, cached)
        return cached.shipment
      }
    }
    const found = await findShipmentViewWithCatalog(this.platform, orgId, id)
    if (!found) { this.entries.delete(key); return undefined }
    const shipment = toShipment(found.view, found.overrides)
    const v = await this.versions(orgId, id)
    // Cache only when nothing moved between the two reads; otherwise the next GET renders again.
    if (v && Number(v.change_seq) === Number(found.view.change_seq)) {
      this.entries.delete(key)
      this.entries.set(key, { changeSeq: Number(v.change_seq), catalogVersion: v.catalog_version ?? '', shipment })
      if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!)
    }
    return shipment
  }
}
