import type { Integration, ServiceTypeRef } from '../../schemas/events/shipments.js'
import type { Platform } from '../platform.js'

export interface ResolvedServiceType extends ServiceTypeRef {
  /** The carrier-hub carrier's integration; decides whether the carrier uploads the label. */
  integration: Integration
}

/**
 * Hook: the carriers module owns service types (`service_types` read model, carrier-hub
 * carriers). TODO(carriers): look the id or code up among the service types of the carrier
 * organization's hub carriers and return it with its carrier's integration. Until then nothing
 * resolves: the shipment stores what was asked for and follows the `service_routes` flow (the
 * routes platform makes label, tracking and statuses).
 */
export async function resolveServiceType(
  _platform: Platform, _carrierOrgId: string, _requested: { id: number | null; code: string | null },
): Promise<ResolvedServiceType | null> {
  return null
}
