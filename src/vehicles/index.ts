import type { HttpModule } from '../http/module.js'
import { operationsRoutes } from '../http/operations.js'
import { createVehicleRoutes } from './create-vehicle.js'
import { updateVehicleRoutes } from './update-vehicle.js'
import { readVehicleRoutes } from './read-vehicles.js'

/** A carrier organization's vehicles and their capacity (DESIGN §3.9); routes check loads against it. */
export const vehiclesModule: HttpModule = {
  name: 'vehicles',
  routes: operationsRoutes(createVehicleRoutes, updateVehicleRoutes, readVehicleRoutes),
}
