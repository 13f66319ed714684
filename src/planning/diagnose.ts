// Why a request could not be placed, judged on each vehicle's empty route: too heavy, out of
// reach inside its windows, or outside the shift. A request that fits some vehicle alone did not
// fit beside the rest of the plan: "fleet".
import type { Instance } from './instance.js'
import type { UnassignedReason } from './model.js'
import { startTime } from './routes.js'

function reasonOn(inst: Instance, v: number, tasks: number[]): UnassignedReason | null {
  const dims = inst.dims
  const size = inst.nLoc
  for (let d = 0; d < dims; d++) {
    let load = 0
    let peak = 0
    for (const t of tasks) load += inst.initLoad[t * dims + d]!
    peak = load
    for (const t of tasks) { load += inst.change[t * dims + d]!; peak = Math.max(peak, load) }
    if (peak > inst.cap[v * dims + d]!) return 'capacity'
  }
  const shiftStart = inst.vTwE[v]!
  const shiftEnd = inst.vTwL[v]!
  // windows that do not meet the shift at all
  for (const t of tasks) {
    let meets = false
    for (let w = inst.twStart[t]!; w < inst.twStart[t]! + inst.twCount[t]!; w++) {
      if (inst.twL[w]! >= shiftStart && inst.twE[w]! <= shiftEnd) meets = true
    }
    if (!meets) return 'shift'
  }
  let time = shiftStart
  let at = inst.vStart[v]!
  for (const t of tasks) {
    const s = startTime(inst, t, time + inst.dur[at * size + inst.loc[t]!]!)
    if (s === Infinity) return 'time_window'
    if (s > shiftEnd) return 'shift'
    time = s + inst.svc[t]!
    at = inst.loc[t]!
  }
  if (time + inst.dur[at * size + inst.vEnd[v]!]! > shiftEnd) return 'shift'
  return null
}

export function diagnose(inst: Instance, tasks: number[]): UnassignedReason {
  const reasons: UnassignedReason[] = []
  for (let v = 0; v < inst.nVehicles; v++) {
    const reason = reasonOn(inst, v, tasks)
    if (reason === null) return 'fleet'
    reasons.push(reason)
  }
  // a vehicle that could carry it tells the more useful story
  if (reasons.includes('time_window')) return 'time_window'
  if (reasons.includes('shift')) return 'shift'
  return 'capacity'
}
