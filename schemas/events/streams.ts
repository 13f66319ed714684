import { createHash } from 'node:crypto'

/**
 * Every stream's name (DESIGN §1, "Streams") and the id read back from it: the one place that spells
 * `task-<ulid>` or `route-<id>`. Modules, reactions and projections name streams through `stream`
 * and read ids through `idOf`.
 */
export const stream = {
  organization: (id: string) => `organization-${id}`,
  subdomain: (subdomain: string) => `subdomain-${subdomain}`,
  place: (id: string) => `place-${id}`,
  shipment: (id: number | string) => `shipment-${id}`,
  /** A carrier organization's claim on one control number. */
  controlNumber: (carrierOrgId: string, code: string) => `control-number-${carrierOrgId}-${code}`,
  /** An organization's renames and recolours of shipment statuses. */
  statusCatalog: (orgId: string) => `shipment-statuses-${orgId}`,
  carrier: (id: string) => `carrier-${id}`,
  tariff: (id: string) => `tariff-${id}`,
  blueprint: (id: number) => `blueprint-${id}`,
  /** An organization's claim on one blueprint key. */
  blueprintKey: (organizationId: string, key: string) => `blueprint-key-${organizationId}-${key}`,
  workflow: (id: number) => `workflow-${id}`,
  /** The reservation of a `start_workflow` action's key: it names at most one started workflow. */
  workflowStart: (actionKey: string) => `workflow-start-${createHash('sha256').update(actionKey).digest('hex').slice(0, 32)}`,
  task: (ulid: string) => `task-${ulid}`,
  route: (id: number) => `route-${id}`,
  vehicle: (id: string) => `vehicle-${id}`,
  user: (id: string) => `user-${id}`,
  webhook: (id: string) => `webhook-${id}`,
} as const

const after = (prefix: string) => (streamId: string): string | null => (streamId.startsWith(prefix) ? streamId.slice(prefix.length) : null)
const integerAfter = (prefix: string) => (streamId: string): number | null => {
  const rest = after(prefix)(streamId)
  return rest !== null && /^\d+$/.test(rest) ? Number(rest) : null
}

/** The id a stream is named for, or null when the stream is not of that kind. */
export const idOf = {
  organization: after('organization-'),
  shipment: integerAfter('shipment-'),
  carrier: after('carrier-'),
  tariff: after('tariff-'),
  blueprint: integerAfter('blueprint-'),
  workflow: integerAfter('workflow-'),
  task: after('task-'),
  route: integerAfter('route-'),
  vehicle: after('vehicle-'),
  user: after('user-'),
  webhook: after('webhook-'),
} as const
