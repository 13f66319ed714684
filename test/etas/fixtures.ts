import { randomBytes } from 'node:crypto'
import type { TestApp } from '../helpers/build.js'
import { startBackground, type Background } from '../../src/processes/background.js'
import { silentLogger } from '../../src/infrastructure/bus/bus.js'
import { tasksWorld } from '../tasks/fixtures.js'
import { until } from '../notifications/fixtures/receiver.js'

export { until }

/** Rosario, and points so many kilometres north of it (1° of latitude ≈ 111.195 km). */
export const ORIGIN = { lat: -32.95, lng: -60.65 }
export const north = (km: number) => ({ lat: ORIGIN.lat + km / 111.195, lng: ORIGIN.lng })

export const addressAt = (p: { lat: number; lng: number }, over: Record<string, unknown> = {}) => ({
  name: 'Ana Gómez', street: 'San Martín', street_number: '50', city: 'Rosario', state: 'Santa Fe', country: 'AR',
  geo_latitude: p.lat, geo_longitude: p.lng, ...over,
})

/**
 * The tasks world with the background running (bus, relay, route life cycle, ETA engine) and helpers
 * for a route of tasks at known points, a driver's positions and the ETAs read back.
 */
export async function etaWorld(h: TestApp, opts: { natsUrl?: string | undefined; background?: boolean } = {}) {
  const w = await tasksWorld(h)
  let bg: Background | undefined
  if (opts.background !== false) {
    const suffix = randomBytes(4).toString('hex')
    bg = await startBackground(h.platform, silentLogger, { nats: { streamName: `ETA_${suffix}`, subjectPrefix: `eta${suffix}` } })
  }
  const api = (method: string, path: string, body?: unknown, token = w.carrier.token) =>
    h.call(method, `/api/v1${path}`, { token, ...(body !== undefined ? { body } : {}) })

  /** A delivery task at `km` north, with an optional window and duration. */
  const taskAt = async (km: number, over: Record<string, unknown> = {}) => {
    const res = await api('POST', '/tasks', { type: 'delivery', address: addressAt(north(km)), duration_minutes: 5, ...over })
    if (res.statusCode !== 201) throw new Error(`task: ${res.body}`)
    return res.json().task.ulid as string
  }

  /** A published route of these tasks, driven by the world's driver, starting at the origin. */
  const route = async (ulids: string[], driverId = w.driver.id) => {
    const res = await api('POST', '/routes', { shift_date: new Date().toISOString().slice(0, 10), driver_id: driverId, task_ulids: ulids, start_address: addressAt(ORIGIN) })
    if (res.statusCode !== 201) throw new Error(`route: ${res.body}`)
    const id = res.json().route.id as number
    const pub = await api('POST', `/routes/${id}/publish`)
    if (pub.statusCode !== 200) throw new Error(`publish: ${pub.body}`)
    return id
  }

  const report = (positions: Array<{ lat: number; lng: number; recorded_at?: string }>, token = w.driver.token) =>
    api('POST', '/drivers/me/positions', { positions: positions.map((p) => ({ recorded_at: new Date().toISOString(), ...p })) }, token)

  const getRoute = async (id: number) => (await api('GET', `/routes/${id}`)).json()

  /** Waits until the route is started (the life cycle runs on the bus). */
  const started = (id: number) => until(async () => (await getRoute(id)).status === 'started', 15_000, `route ${id} started`)

  /** Waits until `check` holds for the route object. */
  const routeWhen = async (id: number, check: (r: any) => boolean, what = 'route') => {
    let last: any
    await until(async () => check(last = await getRoute(id)), 15_000, `${what}: ${JSON.stringify(last?.tasks?.map((t: any) => [t.status, t.eta]))}`)
    return last
  }

  return { ...w, bg, api, taskAt, route, report, getRoute, started, routeWhen }
}
