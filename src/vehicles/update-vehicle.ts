import { UpdateVehicleBody, VehicleEnvelope, VehicleIdParams, type UpdateVehicleBody as Body } from '../../schemas/api/vehicles.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import type { VehicleUpdated } from '../../schemas/events/vehicles.js'
import { ErrorBag, NotFoundError } from '../shared/errors.js'
import { handleCommand } from '../shared/command-handler.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { capacityOf, requireVehicle, vehicleDeciderOf, vehicleStream, type VehicleEvent, type VehicleState } from './vehicle.js'
import { findVehicle, plateTaken, toVehicle } from './queries.js'

export interface UpdateVehicle {
  type: 'UpdateVehicle'
  data: { organization_id: string; changes: Body; now: Date }
}

/** Records only what changes; a PATCH that changes nothing appends nothing. */
export function decide(command: UpdateVehicle, state: VehicleState): VehicleEvent[] {
  requireVehicle(state, command.data.organization_id)
  const { name, plate, capacity } = command.data.changes
  const changes: Omit<VehicleUpdated, 'updated_at'> = {}
  if (name !== undefined && name.trim() !== state.name) changes.name = name.trim()
  if (plate !== undefined && plate.trim().toUpperCase() !== state.plate) changes.plate = plate.trim().toUpperCase()
  if (capacity !== undefined) {
    const next = capacityOf(capacity, state.capacity)
    if (JSON.stringify(next) !== JSON.stringify(state.capacity)) changes.capacity = next
  }
  if (Object.keys(changes).length === 0) return []
  return [{ type: 'VehicleUpdated', data: { ...changes, updated_at: command.data.now.toISOString() } }]
}

export const decider = vehicleDeciderOf(decide)

export const updateVehicleRoutes: RoutesPlugin = async (app, { platform }) => {
  app.patch('/vehicles/:id', {
    schema: {
      tags: ['vehicles'], summary: 'Rename a vehicle, change its plate, or change capacity dimensions (null: unlimited)',
      params: VehicleIdParams, body: UpdateVehicleBody, response: { 200: VehicleEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const { id } = req.params
    if (!(await findVehicle(platform.rm, org.id, id))) throw new NotFoundError('Vehicle')
    const errors = new ErrorBag()
    if (req.body.plate !== undefined && await plateTaken(platform.rm, org.id, req.body.plate, id)) {
      errors.add('plate', 'The plate is already registered to another vehicle of the organization.')
    }
    errors.throwIfAny()
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, vehicleStream(id), decider, { type: 'UpdateVehicle', data: { organization_id: org.id, changes: req.body, now: ctx.now } }, ctx)
    return { success: true, vehicle: toVehicle((await findVehicle(platform.rm, org.id, id))!) }
  })
}
