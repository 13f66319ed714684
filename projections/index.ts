import type { Projection } from './projection.js'
import { shipmentsProjection } from './shipments/shipments-projection.js'
import { organizationsProjection } from './organizations/organizations-projection.js'
import { carriersProjection } from './carriers/carriers-projection.js'
import { tariffsProjection } from './tariffs/tariffs-projection.js'

/** Every read-model projection the runner drives (and `rebuild` replays). */
export const allProjections: Projection[] = [
  organizationsProjection,
  shipmentsProjection,
  carriersProjection,
  tariffsProjection,
]
