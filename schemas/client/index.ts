import createFetchClient, { type Client, type ClientOptions } from 'openapi-fetch'
import type { paths } from './openapi.js'

/** Every named schema of the API as a type (`Shipment`, `Task`, `CreateShipmentRequest`, …), and `paths`, `operations`, `components`. */
export type * from './openapi.js'

export type ShippingClient = Client<paths>

export interface ShippingClientOptions extends Omit<ClientOptions, 'headers'> {
  /** Where the API is, without the area prefix: `https://api.example.com`. */
  baseUrl: string
  /** The credential of the area you call: an organization or user token, a carrier API key, or the admin token. */
  token?: string
  headers?: Record<string, string>
}

/**
 * A typed client of the API: `client.POST('/api/v1/shipments', { body })` checks the path, the
 * parameters and the body against the API's schemas, and answers `{ data, error, response }` typed
 * by status (`data` on 2xx, `error` an `ApiError` or a `ValidationError` otherwise).
 */
export function createClient({ token, headers, ...options }: ShippingClientOptions): ShippingClient {
  return createFetchClient<paths>({
    ...options,
    headers: { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
  })
}
