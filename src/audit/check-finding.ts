/** What `audit-log check` can name; its own file so the table checks beside check.ts can use it. */
export type CheckKind = 'modified' | 'missing' | 'reordered' | 'inserted' | 'tree' | 'signature' | 'key' | 'known-head' | 'subtree' | 'map' | 'unsealed'

export interface CheckFinding {
  kind: CheckKind
  /** `shipment-42 v3 StatusReported (event 0b6…)`, or the head / leaf it is about. */
  subject: string
  eventId?: string
  leafIndex?: number
  detail: string
}
