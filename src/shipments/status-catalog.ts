import type { ShipmentStatusCustomized, StatusCatalogEvents } from '../../schemas/events/shipment-statuses.js'
import type { EventOf } from '../../schemas/events/event-map.js'
import { stream } from '../../schemas/events/streams.js'

/**
 * The routes-API status catalog: the spec's nine states plus `returned` (DESIGN §3.5), each with
 * a default name and hex colour, and the substatuses the platform sets. An organization renames
 * and recolours statuses (and substatuses) for itself; a viewer sees its own catalog.
 */
export interface CatalogEntry { code: string; name: string; color: string | null }

export const STATUS_DEFAULTS: readonly CatalogEntry[] = [
  { code: 'pending', name: 'Pending', color: '#9E9E9E' },
  { code: 'shipped', name: 'Shipped', color: '#1E88E5' },
  { code: 'picked_up', name: 'Picked up', color: '#3949AB' },
  { code: 'in_facility', name: 'In facility', color: '#5E35B1' },
  { code: 'out_for_delivery', name: 'Out for delivery', color: '#FB8C00' },
  { code: 'attempted_delivery', name: 'Attempted delivery', color: '#F4511E' },
  { code: 'delivered', name: 'Delivered', color: '#43A047' },
  { code: 'not_delivered', name: 'Not delivered', color: '#E53935' },
  { code: 'cancelled', name: 'Cancelled', color: '#616161' },
  { code: 'returned', name: 'Returned', color: '#8D6E63' },
]

/** Substatus code → default name; which statuses use them is in `SUBSTATUSES_OF`. */
export const SUBSTATUS_DEFAULTS: readonly CatalogEntry[] = [
  { code: 'processing', name: 'Processing', color: null },
  { code: 'pending_preparation', name: 'Pending preparation', color: null },
  { code: 'ready_to_ship', name: 'Ready to ship', color: null },
  { code: 'soon_deliver', name: 'About to be delivered', color: null },
  { code: 'receiver_absent', name: 'Receiver absent', color: null },
  { code: 'bad_address', name: 'Bad address', color: null },
  { code: 'rejected', name: 'Rejected by the receiver', color: null },
  { code: 'dangerous_area', name: 'Dangerous area', color: null },
  // The delivery task's failure reasons (DESIGN §3.9), set by the routes operations on attempted_delivery.
  { code: 'no_answer', name: 'No answer', color: null },
  { code: 'damaged', name: 'Damaged', color: null },
  { code: 'closed', name: 'Closed', color: null },
  { code: 'other', name: 'Other', color: null },
  { code: 'lost', name: 'Lost', color: null },
  { code: 'expired', name: 'Expired', color: null },
]

export const SUBSTATUSES_OF: Record<string, readonly string[]> = {
  pending: ['processing', 'pending_preparation', 'ready_to_ship'],
  out_for_delivery: ['soon_deliver'],
  attempted_delivery: ['receiver_absent', 'bad_address', 'rejected', 'dangerous_area', 'no_answer', 'damaged', 'closed', 'other'],
  not_delivered: ['lost'],
  cancelled: ['expired'],
}

const DEFAULTS = new Map([...STATUS_DEFAULTS, ...SUBSTATUS_DEFAULTS].map((e) => [e.code, e]))
export const isCatalogCode = (code: string): boolean => DEFAULTS.has(code)
export const isStatusCode = (code: string): boolean => STATUS_DEFAULTS.some((s) => s.code === code)

export type Overrides = ReadonlyMap<string, { name: string | null; color: string | null }>

/** The entry an organization sees: its override where it has one, else the default. */
export function catalogEntry(code: string, overrides: Overrides | undefined): CatalogEntry {
  const d = DEFAULTS.get(code) ?? { code, name: code.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase()), color: null }
  const o = overrides?.get(code)
  return { code, name: o?.name ?? d.name, color: o?.color ?? d.color }
}

export const statusCatalogStream = stream.statusCatalog

export const HEX_COLOR = /^#[0-9A-Fa-f]{6}$/
export const STATUS_NAME_MAX = 50

export type StatusCatalogEvent = EventOf<typeof StatusCatalogEvents>
export type CatalogState = Map<string, { name: string | null; color: string | null }>

/** Each code's override (name and colour; null: the default), as recorded. */
export const initialCatalogState = (): CatalogState => new Map()

export const evolveCatalog = (state: CatalogState, e: StatusCatalogEvent): CatalogState =>
  new Map(state).set(e.data.code, { name: e.data.name, color: e.data.color })

/** The catalog an organization sees: the ten statuses, each with its substatuses, its overrides applied. */
export const catalogOf = (overrides: Overrides) => STATUS_DEFAULTS.map((s) => {
  const e = catalogEntry(s.code, overrides)
  return {
    ...e,
    substatuses: (SUBSTATUSES_OF[s.code] ?? []).map((c) => { const sub = catalogEntry(c, overrides); return { code: sub.code, name: sub.name } }),
  }
})
