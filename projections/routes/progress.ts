/** A route's progress (DESIGN §3.9), the same in the route object, its snapshot and its live feed. */
export interface RouteProgress {
  total: number
  pending: number
  /** Started or arrived: the driver is on it. */
  started: number
  complete: number
  failed: number
  cancelled: number
  /** Share of the tasks that are final, 0–100, rounded down (100 only when every task is final). */
  percent: number
}

export type TaskStatusName = 'pending' | 'started' | 'arrived' | 'complete' | 'failed' | 'cancelled'

export function progressOf(statuses: Iterable<TaskStatusName>): RouteProgress {
  const p: RouteProgress = { total: 0, pending: 0, started: 0, complete: 0, failed: 0, cancelled: 0, percent: 0 }
  for (const s of statuses) {
    p.total++
    if (s === 'arrived' || s === 'started') p.started++
    else p[s]++
  }
  const final = p.complete + p.failed + p.cancelled
  p.percent = p.total === 0 ? 0 : Math.floor((100 * final) / p.total)
  return p
}
