import { CreateVehicleBody, VehicleEnvelope } from '../../schemas/api/vehicles.js'
import { errorResponses } from '../../schemas/api/common.js'
import type { VehicleCapacity } from '../../schemas/events/vehicles.js'
import { ErrorBag, IllegalStateError } from '../shared/errors.js'
import { publicId } from '../shared/ids.js'
import { handleCommand } from '../shared/command-handler.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { capacityOf, vehicleDeciderOf, vehicleStream, type VehicleEvent, type VehicleState } from './vehicle.js'
import { findVehicle, plateTaken, toVehicle } from './queries.js'

export interface CreateVehicle {
  type: 'CreateVehicle'
  data: { id: string; organization_id: string; name: string; plate: string; capacity: VehicleCapacity; now: Date }
}

export function decide(command: CreateVehicle, state: VehicleState): VehicleEvent[] {
  if (state.exists) throw new IllegalStateError('The vehicle already exists.', 'vehicle_exists')
  const d = command.data
  return [{
    type: 'VehicleCreated',
    data: { id: d.id, organization_id: d.organization_id, name: d.name.trim(), plate: d.plate.trim().toUpperCase(), capacity: d.capacity, created_at: d.now.toISOString() },
  }]
}

export const decider = vehicleDeciderOf(decide)

export const createVehicleRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/vehicles', {
    schema: {
      tags: ['vehicles'], summary: 'Add a vehicle with its capacity (grams, cm³, packages; a missing dimension is unlimited)',
      body: CreateVehicleBody, response: { 201: VehicleEnvelope, ...errorResponses },
    },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const errors = new ErrorBag()
    if (await plateTaken(platform.rm, org.id, req.body.plate)) errors.add('plate', 'The plate is already registered to another vehicle of the organization.')
    errors.throwIfAny()
    const id = publicId('veh')
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, vehicleStream(id), decider, {
      type: 'CreateVehicle',
      data: { id, organization_id: org.id, name: req.body.name, plate: req.body.plate, capacity: capacityOf(req.body.capacity), now: ctx.now },
    }, ctx)
    return reply.code(201).send({ success: true, vehicle: toVehicle((await findVehicle(platform.rm, org.id, id))!) })
  })
}
