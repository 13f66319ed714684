import { CreatePlaceBody, PlaceEnvelope } from '../../schemas/api/organizations.js'
import { errorResponses } from '../../schemas/api/common.js'
import type { PlaceAdded } from '../../schemas/events/organizations.js'
import type { Decider } from '../shared/decider.js'
import { ErrorBag, IllegalStateError } from '../shared/errors.js'
import { publicId } from '../shared/ids.js'
import { normalizePhone } from '../shared/phone.js'
import { handleCommand } from '../shared/command-handler.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import { fieldChecks } from '../http/plugins/validation.js'
import type { RoutesPlugin } from '../http/module.js'
import { evolve, initialState, placeStream, type PlaceEvent, type PlaceState } from './place.js'
import { operationalAddressDecider, streamOf } from './organization.js'
import { findPlace, toPlace } from './queries.js'

/** A place of the organization, its location resolved and its phone normalized before deciding. */
export interface AddPlace { type: 'AddPlace'; data: PlaceAdded }

/** A place is added once (its id is new). */
export function decide(command: AddPlace, state: PlaceState): PlaceEvent[] {
  if (state.exists) throw new IllegalStateError('The place already exists.', 'place_exists')
  return [{ type: 'PlaceAdded', data: command.data }]
}

export const decider: Decider<PlaceState, AddPlace, PlaceEvent> = { decide, evolve, initialState }

/** POST /organizations/my/places: the location resolved against the gazetteer, the phone to E.164. */
export const addPlaceRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/organizations/my/places', {
    schema: {
      tags: ['organizations'],
      summary: 'Save a place (depot, branch, pickup point)',
      body: CreatePlaceBody,
      response: { 201: PlaceEnvelope, ...errorResponses },
    },
    // Reported in one 422 with the schema's errors.
    preValidation: fieldChecks((body, errors) => {
      if (body.city_id === undefined && body.city === undefined) errors.add('city', 'The city field is required when city_id is not present.')
      if (body.city_id === undefined && body.country === undefined && body.country_id === undefined && body.state_id === undefined) {
        errors.add('country', 'The country field is required when city_id is not present.')
      }
    }),
  }, async (req, reply) => {
    const org = organizationOf(req)
    const body = req.body
    const errors = new ErrorBag()
    const loc = await platform.geocoder.resolveLocation(body)
    if (!loc.ok) errors.merge('', loc.errors as Record<string, string[]>)
    let phone: string | null = null
    const rawPhone = body.phone?.trim() ? body.phone.trim() : null
    if (rawPhone) {
      const p = normalizePhone(rawPhone, loc.ok ? loc.country.iso : undefined)
      if (p.ok) phone = p.e164
      else errors.add('phone', 'The phone must be a valid phone number (E.164, or national for the address\'s country).')
    }
    errors.throwIfAny()
    if (!loc.ok) return
    const id = publicId('ple')
    const ctx = commandContext(platform, req)
    const manual = body.geo_latitude != null && body.geo_longitude != null
    await handleCommand(platform.commands, placeStream(id), decider, {
      type: 'AddPlace',
      data: {
        id, organization_id: org.id, org_internal_id: Number(org.internal_id), name: body.name.trim(),
        street: body.street, street_number: body.street_number, floor: body.floor ?? null, apartment: body.apartment ?? null,
        reference: body.reference ?? null, phone_raw: rawPhone, phone, email: body.email ?? null, zipcode: body.zipcode ?? null,
        city: loc.city, state: loc.state, country: { id: loc.country.id, code: loc.country.iso, name: loc.country.name },
        geo_latitude: manual ? body.geo_latitude! : loc.latitude, geo_longitude: manual ? body.geo_longitude! : loc.longitude,
        created_at: ctx.now.toISOString(),
      },
    }, ctx)
    if (body.operational || !org.operational_address_id) {
      await handleCommand(platform.commands, streamOf(org.id), operationalAddressDecider, { type: 'SetOperationalAddress', data: { place_id: id } }, ctx)
    }
    const row = await findPlace(platform.rm, org.id, id)
    return reply.code(201).send({ place: toPlace(row!) })
  })
}
