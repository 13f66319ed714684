import { ApiError, type ApiClient } from './api-client.js'
import type { PlannedRoute, PlannedStop, Point } from './day.js'
import { decideStop, type RouteTaskView, stopName } from './route-stops.js'
import type { ServerClock } from './server-clock.js'

/** What the simulator reads of `GET /routes/{id}`. */
interface RouteView { id: number; driver: { id: string; name: string } | null; tasks: RouteTaskView[] }

/** `--route ID:TOKEN`: a published route and its driver's token (shown once, when the driver was added). */
export function parseRouteSpec(spec: string): { id: number; token: string } {
  const m = /^(\d+):(\S+)$/.exec(spec)
  if (!m) throw new Error(`--route ${spec}: expected <route id>:<driver token>`)
  return { id: Number(m[1]), token: m[2]! }
}

/**
 * Published routes to drive as they are (`--route ID:TOKEN`), read with each driver's own token
 * (a driver sees the published routes it drives and their tasks), so no organization token is
 * needed. Every stop that is not driven, or driven only to an approximate point, is named in the log.
 */
export async function existingRoutes(api: ApiClient, clock: ServerClock, specs: readonly string[], depot: Point, log: (line: string) => void = () => undefined): Promise<{ routes: PlannedRoute[]; unassigned: { task_ulid: string; reason: string }[]; startAt: number }> {
  const routes: PlannedRoute[] = []
  for (const spec of specs) {
    const { id, token } = parseRouteSpec(spec)
    const driver = api.as(token)
    const r = await driver.call<RouteView>('GET', `/routes/${id}`).catch((err: unknown) => {
      if (err instanceof ApiError && (err.status === 404 || err.status === 401)) {
        throw new Error(`route ${id}: ${err.status === 401 ? 'the token was refused' : 'not found'} (a driver's token sees only the published routes it drives)`)
      }
      throw err
    })
    if (!r.driver) throw new Error(`route ${r.id} has no driver`)
    const stops: PlannedStop[] = []
    let final = 0
    for (const t of r.tasks) {
      const d = decideStop(t)
      if (!d.drive) {
        if (d.final) final++
        else log(`route ${r.id}: ${stopName(t)} skipped: ${d.reason}`)
        continue
      }
      if (d.warning) log(`route ${r.id}: warning: ${stopName(t)}: ${d.warning}`)
      const task = await driver.call<{ duration_minutes: number | null }>('GET', `/tasks/${t.ulid}`)  // a task is answered at root
      stops.push({
        ulid: t.ulid, point: d.point,
        windows: t.time_windows.map((w) => ({ from: Date.parse(w.from), to: Date.parse(w.to) })),
        serviceMs: (task.duration_minutes ?? 5) * 60_000,
      })
    }
    if (final > 0) log(`route ${r.id}: ${final} stop(s) already final, not driven`)
    if (stops.length === 0) log(`route ${r.id}: nothing to drive`)
    routes.push({ id: r.id, driverId: r.driver.id, driverName: r.driver.name, driverToken: token, stops })
  }
  if (routes.length === 0) throw new Error('no route given')
  // The server's clock (CLOCK_RATE) from a time it stamps: the first driver reports itself at the depot.
  const first = await api.as(routes[0]!.driverToken).call<{ received_at: string }>('POST', '/drivers/me/positions', { positions: [{ ...depot, recorded_at: new Date().toISOString() }] })
  clock.calibrate(first.received_at)
  log(`${routes.length} existing routes (${routes.map((r) => r.stops.length).join(', ')} open stops)`)
  return { routes, unassigned: [], startAt: clock.now() }
}
