import type { Integration, ServiceTypeRef } from '../../schemas/events/shipments.js'
import type { Platform } from '../platform.js'
import { resolveHubServiceType } from '../carriers/availability.js'

export interface ResolvedServiceType extends ServiceTypeRef {
  /** The carrier-hub carrier's integration; decides whether the carrier uploads the label. */
  integration: Integration
}

/**
 * `service_type_id` / `service_type_code` of `POST /shipments` → a service type of the carrier
 * organization's hub carriers that the shipper may use (the carriers module owns service types).
 * Null when nothing matches: the caller answers 422 on the field it sent. A shipment without a
 * service type follows the `service_routes` flow (the routes platform makes label and statuses).
 */
export async function resolveServiceType(
  platform: Platform, carrierOrgId: string, requested: { id: number | null; code: string | null }, shipperOrgId?: string,
): Promise<ResolvedServiceType | null> {
  const found = await resolveHubServiceType(platform, carrierOrgId, requested, shipperOrgId)
  return found ? { id: found.id, code: found.code, name: found.name, carrier_hub_id: found.carrier_hub_id, integration: found.integration } : null
}
