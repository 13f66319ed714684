import type { Shipment } from '../../schemas/api/shipments.js'
import { addressPrecision } from '../infrastructure/geo/precision.js'

/**
 * Address shaping: an address row of the read model (`addresses`, or a task's `address` JSON) as
 * the API's address object. Shared by the shipments, tasks and routes views.
 */

type Json = Record<string, any>

export function toAddress(a: Json | null): Shipment['origin'] {
  if (!a) {
    return { id: '', name: '', street: '', street_number: '', floor: null, apartment: null, reference: null, zipcode: null, phone: null, email: null, city: null, state: null, country: null, geo_latitude: null, geo_longitude: null, geo_precision: null }
  }
  return {
    id: a.id, name: a.name, street: a.street, street_number: a.street_number, floor: a.floor, apartment: a.apartment,
    reference: a.reference, zipcode: a.zipcode, phone: a.phone, email: a.email,
    city: a.city_id == null ? null : { id: Number(a.city_id), name: a.city_name ?? '' },
    state: a.state_id == null ? null : { id: Number(a.state_id), name: a.state_name ?? '' },
    country: a.country_id == null ? null : { id: Number(a.country_id), name: a.country_name ?? '', iso: a.country_iso ?? '' },
    geo_latitude: a.geo_latitude, geo_longitude: a.geo_longitude,
    // Rows projected before the column existed get the same rule a rebuild would store.
    geo_precision: addressPrecision(a),
  }
}
