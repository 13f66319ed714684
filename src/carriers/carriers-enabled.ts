import { ForbiddenError } from '../shared/errors.js'
import type { OrganizationRow } from '../http/plugins/auth.js'

/** Carrier hub endpoints need an organization the platform enabled (spec: "must be enabled"). */
export function requireCarriersEnabled(org: OrganizationRow): void {
  if (!org.carriers_enabled) throw new ForbiddenError('This organization is not enabled to create carriers.', 'carriers_not_enabled')
}
