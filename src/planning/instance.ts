// The problem compiled into flat typed arrays for the search's inner loops. A "task" is one stop:
// a job, or a shipment's pickup or delivery; a "request" is what is assigned as a whole (a job,
// or both steps of a shipment).
import type { Problem } from './model.js'

export const KIND_JOB = 0
export const KIND_PICKUP = 1
export const KIND_DELIVERY = 2

export interface Instance {
  /** Locations in the matrix plus one virtual location (the last) that is zero from and to everywhere. */
  nLoc: number
  virtualLoc: number
  dur: Float64Array
  dist: Float64Array
  /** What the search minimises: `dur` or `dist` (the objective). */
  cost: Float64Array
  dims: number
  // tasks
  nTasks: number
  taskId: Int32Array
  kind: Uint8Array
  loc: Int32Array
  svc: Float64Array
  twStart: Int32Array
  twCount: Int32Array
  twE: Float64Array
  twL: Float64Array
  /** What a task adds to the load at the route's start (a job's delivery). */
  initLoad: Float64Array
  /** What the load changes by at the task (pickup − delivery). */
  change: Float64Array
  partner: Int32Array
  requestOf: Int32Array
  // requests: one or two tasks
  nRequests: number
  requestFirst: Int32Array
  requestSecond: Int32Array
  // vehicles
  nVehicles: number
  vehicleId: Int32Array
  vStart: Int32Array
  vEnd: Int32Array
  vTwE: Float64Array
  vTwL: Float64Array
  cap: Float64Array
  /** Vehicles with the same start, end, shift and capacity share a class: one empty route per class is tried. */
  vClass: Int32Array
  /** Mean travel cost between tasks (scales the annealing temperature). */
  meanTravel: number
}

function flatten(matrix: ArrayLike<number>[], n: number, name: string): Float64Array {
  if (matrix.length !== n) throw new RangeError(`${name}: expected ${n} rows, got ${matrix.length}`)
  const size = n + 1
  const out = new Float64Array(size * size)
  for (let i = 0; i < n; i++) {
    const row = matrix[i]!
    if (row.length !== n) throw new RangeError(`${name}[${i}]: expected ${n} columns, got ${row.length}`)
    for (let j = 0; j < n; j++) {
      const v = Number(row[j])
      if (!Number.isFinite(v) || v < 0) throw new RangeError(`${name}[${i}][${j}]: expected a finite non-negative number`)
      out[i * size + j] = v
    }
  }
  return out
}

export function compile(problem: Problem, objective: 'duration' | 'distance' = 'duration'): Instance {
  const durations = problem.matrices.durations
  const n = durations.length
  const dur = flatten(durations, n, 'durations')
  const dist = problem.matrices.distances ? flatten(problem.matrices.distances, n, 'distances') : dur
  const jobs = problem.jobs ?? []
  const shipments = problem.shipments ?? []
  const vehicles = problem.vehicles
  if (vehicles.length === 0) throw new RangeError('vehicles: at least one is needed')

  let dims = 0
  for (const j of jobs) dims = Math.max(dims, j.delivery?.length ?? 0, j.pickup?.length ?? 0)
  for (const s of shipments) dims = Math.max(dims, s.amount?.length ?? 0)
  for (const v of vehicles) dims = Math.max(dims, v.capacity?.length ?? 0)
  dims = Math.max(dims, 1)

  const nTasks = jobs.length + 2 * shipments.length
  const nRequests = jobs.length + shipments.length
  const taskId = new Int32Array(nTasks)
  const kind = new Uint8Array(nTasks)
  const loc = new Int32Array(nTasks)
  const svc = new Float64Array(nTasks)
  const twStart = new Int32Array(nTasks)
  const twCount = new Int32Array(nTasks)
  const twEList: number[] = []
  const twLList: number[] = []
  const initLoad = new Float64Array(nTasks * dims)
  const change = new Float64Array(nTasks * dims)
  const partner = new Int32Array(nTasks).fill(-1)
  const requestOf = new Int32Array(nTasks)
  const requestFirst = new Int32Array(nRequests)
  const requestSecond = new Int32Array(nRequests).fill(-1)

  const checkLoc = (index: number, what: string): number => {
    if (!Number.isInteger(index) || index < 0 || index >= n) throw new RangeError(`${what}: location_index ${index} is outside the matrix (0..${n - 1})`)
    return index
  }
  const checkAmount = (amount: number[] | undefined, what: string): number[] => {
    const out = new Array<number>(dims).fill(0)
    amount?.forEach((a, d) => {
      if (!Number.isFinite(a) || a < 0) throw new RangeError(`${what}: amounts must be finite and non-negative`)
      out[d] = a
    })
    return out
  }
  const setStop = (t: number, id: number, k: number, location: number, service: number | undefined, windows: [number, number][] | undefined, what: string) => {
    taskId[t] = id
    kind[t] = k
    loc[t] = checkLoc(location, what)
    const s = service ?? 0
    if (!Number.isFinite(s) || s < 0) throw new RangeError(`${what}: service must be finite and non-negative`)
    svc[t] = s
    const given: [number, number][] = windows && windows.length > 0 ? [...windows] : [[0, Infinity]]
    const list = given.sort((a, b) => a[0] - b[0])
    twStart[t] = twEList.length
    twCount[t] = list.length
    for (const [e, l] of list) {
      if (!(e <= l)) throw new RangeError(`${what}: a time window ends before it starts`)
      twEList.push(e)
      twLList.push(l)
    }
  }

  let t = 0
  jobs.forEach((job, r) => {
    const what = `job ${job.id}`
    setStop(t, job.id, KIND_JOB, job.location_index, job.service, job.time_windows, what)
    const del = checkAmount(job.delivery, what)
    const pick = checkAmount(job.pickup, what)
    for (let d = 0; d < dims; d++) {
      initLoad[t * dims + d] = del[d]!
      change[t * dims + d] = pick[d]! - del[d]!
    }
    requestOf[t] = r
    requestFirst[r] = t
    t++
  })
  shipments.forEach((s, i) => {
    const r = jobs.length + i
    const p = t
    const q = t + 1
    setStop(p, s.pickup.id, KIND_PICKUP, s.pickup.location_index, s.pickup.service, s.pickup.time_windows, `shipment pickup ${s.pickup.id}`)
    setStop(q, s.delivery.id, KIND_DELIVERY, s.delivery.location_index, s.delivery.service, s.delivery.time_windows, `shipment delivery ${s.delivery.id}`)
    const amount = checkAmount(s.amount, `shipment pickup ${s.pickup.id}`)
    for (let d = 0; d < dims; d++) {
      change[p * dims + d] = amount[d]!
      change[q * dims + d] = -amount[d]!
    }
    partner[p] = q
    partner[q] = p
    requestOf[p] = r
    requestOf[q] = r
    requestFirst[r] = p
    requestSecond[r] = q
    t += 2
  })

  const nVehicles = vehicles.length
  const vehicleId = new Int32Array(nVehicles)
  const vStart = new Int32Array(nVehicles)
  const vEnd = new Int32Array(nVehicles)
  const vTwE = new Float64Array(nVehicles)
  const vTwL = new Float64Array(nVehicles)
  const cap = new Float64Array(nVehicles * dims)
  const vClass = new Int32Array(nVehicles)
  const classes = new Map<string, number>()
  vehicles.forEach((v, i) => {
    const what = `vehicle ${v.id}`
    vehicleId[i] = v.id
    vStart[i] = v.start_index === undefined ? n : checkLoc(v.start_index, what)
    vEnd[i] = v.end_index === undefined ? n : checkLoc(v.end_index, what)
    const [e, l] = v.time_window ?? [0, Infinity]
    if (!(e <= l)) throw new RangeError(`${what}: the shift ends before it starts`)
    vTwE[i] = e
    vTwL[i] = l
    for (let d = 0; d < dims; d++) {
      const c = v.capacity?.[d] ?? Infinity
      if (!(c >= 0)) throw new RangeError(`${what}: capacity must be non-negative`)
      cap[i * dims + d] = c
    }
    const key = `${vStart[i]}|${vEnd[i]}|${e}|${l}|${Array.from(cap.subarray(i * dims, (i + 1) * dims)).join(',')}`
    if (!classes.has(key)) classes.set(key, classes.size)
    vClass[i] = classes.get(key)!
  })

  let sum = 0
  let count = 0
  const size = n + 1
  for (let a = 0; a < nTasks; a++) {
    for (let b = 0; b < nTasks; b += Math.max(1, Math.floor(nTasks / 50))) {
      sum += (objective === 'distance' ? dist : dur)[loc[a]! * size + loc[b]!]!
      count++
    }
  }

  return {
    nLoc: size, virtualLoc: n, dur, dist, cost: objective === 'distance' ? dist : dur, dims,
    nTasks, taskId, kind, loc, svc, twStart, twCount,
    twE: Float64Array.from(twEList), twL: Float64Array.from(twLList),
    initLoad, change, partner, requestOf,
    nRequests, requestFirst, requestSecond,
    nVehicles, vehicleId, vStart, vEnd, vTwE, vTwL, cap, vClass,
    meanTravel: count > 0 && sum > 0 ? sum / count : 1,
  }
}
