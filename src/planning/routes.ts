// One vehicle's route and the bookkeeping that makes an insertion's check O(1): the earliest
// service start at each position (forward), the latest one that keeps the rest feasible
// (backward), and prefix/suffix maxima of the load on board.
import type { Instance } from './instance.js'

/** Earliest service start at `task` for an arrival at `a` (Infinity: every window missed). */
export function startTime(inst: Instance, task: number, a: number): number {
  const first = inst.twStart[task]!
  const count = inst.twCount[task]!
  for (let w = first; w < first + count; w++) {
    if (a <= inst.twL[w]!) return a < inst.twE[w]! ? inst.twE[w]! : a
  }
  return Infinity
}

/** Latest service start at `task` no later than `bound` (−Infinity: none). */
export function latestStart(inst: Instance, task: number, bound: number): number {
  const first = inst.twStart[task]!
  let latest = -Infinity
  // windows may overlap: the latest start is the best over all of them
  for (let w = first; w < first + inst.twCount[task]!; w++) {
    if (inst.twE[w]! <= bound) {
      const s = bound < inst.twL[w]! ? bound : inst.twL[w]!
      if (s > latest) latest = s
    }
  }
  return latest
}

export class RouteState {
  /** Task at positions 1..n (index k−1); positions 0 and n+1 are the start and the end. */
  readonly seq: Int32Array
  n = 0
  readonly locs: Int32Array
  readonly svcs: Float64Array
  /** Earliest service start per position. */
  readonly early: Float64Array
  /** Latest service start per position keeping the rest of the route feasible. */
  readonly late: Float64Array
  /** Load on board after each position 0..n, per dimension: load[k * dims + d]. */
  readonly load: Float64Array
  readonly prefMax: Float64Array
  readonly sufMax: Float64Array
  cost = 0

  constructor(readonly inst: Instance, readonly vehicle: number) {
    const size = inst.nTasks + 2
    this.seq = new Int32Array(inst.nTasks)
    this.locs = new Int32Array(size)
    this.svcs = new Float64Array(size)
    this.early = new Float64Array(size)
    this.late = new Float64Array(size)
    this.load = new Float64Array(size * inst.dims)
    this.prefMax = new Float64Array(size * inst.dims)
    this.sufMax = new Float64Array(size * inst.dims)
    this.update()
  }

  /** Replaces the sequence; false if the route is now infeasible. */
  setTasks(tasks: ArrayLike<number>, count: number): boolean {
    for (let i = 0; i < count; i++) this.seq[i] = tasks[i]!
    this.n = count
    return this.update()
  }

  /** Recomputes times, loads and cost after the sequence changed; false if it is infeasible. */
  update(): boolean {
    const inst = this.inst
    const v = this.vehicle
    const n = this.n
    const size = inst.nLoc
    const dims = inst.dims
    const { locs, svcs, early, late, load, prefMax, sufMax, seq } = this
    locs[0] = inst.vStart[v]!
    svcs[0] = 0
    for (let k = 1; k <= n; k++) {
      const t = seq[k - 1]!
      locs[k] = inst.loc[t]!
      svcs[k] = inst.svc[t]!
    }
    locs[n + 1] = inst.vEnd[v]!
    svcs[n + 1] = 0

    let ok = true
    let cost = 0
    early[0] = inst.vTwE[v]!
    for (let k = 1; k <= n + 1; k++) {
      const travel = inst.dur[locs[k - 1]! * size + locs[k]!]!
      cost += inst.cost[locs[k - 1]! * size + locs[k]!]!
      const a = early[k - 1]! + svcs[k - 1]! + travel
      early[k] = k <= n ? startTime(inst, seq[k - 1]!, a) : a
    }
    if (!(early[n + 1]! <= inst.vTwL[v]!)) ok = false
    this.cost = cost

    late[n + 1] = inst.vTwL[v]!
    for (let k = n; k >= 1; k--) {
      late[k] = latestStart(inst, seq[k - 1]!, late[k + 1]! - inst.dur[locs[k]! * size + locs[k + 1]!]! - svcs[k]!)
    }
    late[0] = Math.min(inst.vTwL[v]!, late[1]! - inst.dur[locs[0]! * size + locs[1]!]!)

    for (let d = 0; d < dims; d++) {
      let l = 0
      for (let k = 1; k <= n; k++) l += inst.initLoad[seq[k - 1]! * dims + d]!
      load[d] = l
      for (let k = 1; k <= n; k++) {
        l += inst.change[seq[k - 1]! * dims + d]!
        load[k * dims + d] = l
      }
      let m = -Infinity
      for (let k = 0; k <= n; k++) {
        const x = load[k * dims + d]!
        if (x > m) m = x
        prefMax[k * dims + d] = m
      }
      m = -Infinity
      for (let k = n; k >= 0; k--) {
        const x = load[k * dims + d]!
        if (x > m) m = x
        sufMax[k * dims + d] = m
      }
      if (prefMax[n * dims + d]! > inst.cap[v * dims + d]!) ok = false
    }
    return ok
  }
}
