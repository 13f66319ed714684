import type { VehicleCapacity } from '../../schemas/events/vehicles.js'

/** One stop as the capacity rule sees it (a route's task snapshot has these). */
export interface LoadStop {
  type: string
  load: Load
  shipment_id: number | null
}
export interface Load { grams: number; volume_cm3: number; packages: number }

export const DIMENSIONS = ['grams', 'volume_cm3', 'packages'] as const
export type Dimension = typeof DIMENSIONS[number]

export interface Overflow { dimension: Dimension; capacity: number; peak: number }
export interface LoadProfile {
  /** The highest load along the sequence, per dimension (the start included). */
  peak: Load
  /** The first dimension (in DIMENSIONS order) whose peak exceeds the capacity, or null. */
  overflow: Overflow | null
}

const zero = (): Load => ({ grams: 0, volume_cm3: 0, packages: 0 })
/** Tasks that put goods on the vehicle where they stand (a return collects them back from the recipient). */
const LOADS_AT_STOP = new Set(['pickup', 'return'])

/**
 * The loading rule of DESIGN §3.9, per dimension: every delivery is on board at the start unless
 * its shipment is picked up earlier on this route; a pickup adds its load where it stands; a
 * delivery takes its load off. Inspections and services carry nothing. Pure and O(n).
 */
export function loadProfile(stops: readonly LoadStop[], capacity: VehicleCapacity): LoadProfile {
  const current = zero()
  // A delivery is loaded at the start unless a pickup of its shipment stands before it.
  const seenPickup = new Set<number>()
  for (const s of stops) {
    if (LOADS_AT_STOP.has(s.type) && s.shipment_id !== null) seenPickup.add(s.shipment_id)
    const atStart = s.type === 'delivery' && !(s.shipment_id !== null && seenPickup.has(s.shipment_id))
    if (atStart) for (const d of DIMENSIONS) current[d] += s.load[d]
  }
  const peak = { ...current }
  for (const s of stops) {
    if (LOADS_AT_STOP.has(s.type)) for (const d of DIMENSIONS) current[d] += s.load[d]
    else if (s.type === 'delivery') for (const d of DIMENSIONS) current[d] -= s.load[d]
    for (const d of DIMENSIONS) if (current[d] > peak[d]) peak[d] = current[d]
  }
  let overflow: Overflow | null = null
  for (const d of DIMENSIONS) {
    const cap = capacity[d]
    if (cap !== null && peak[d] > cap) { overflow = { dimension: d, capacity: cap, peak: peak[d] }; break }
  }
  return { peak, overflow }
}

/** The 422 message of an overflow, naming the dimension, the capacity and the peak. */
export const overflowMessage = (o: Overflow) =>
  `The route's load would exceed the vehicle's capacity in ${o.dimension}: capacity ${o.capacity}, peak ${o.peak}.`
