// An independent feasibility checker for the route planner's answers, shared by the tests and the
// benchmark. It reads the Solomon file itself and re-simulates every route from scratch: nothing
// here comes from src/planning except the shapes of the answers.
import type { Problem, Solution } from '../../src/planning/index.js'

const EPS = 1e-6

interface Customer { no: number; x: number; y: number; demand: number; ready: number; due: number; service: number }

export interface SolomonFile { vehicles: number; capacity: number; depot: Customer; customers: Map<number, Customer> }

export function readSolomonFile(text: string): SolomonFile {
  const rows = text.split('\n').map((l) => l.trim()).filter((l) => /^[0-9]/.test(l)).map((l) => l.split(/\s+/).map(Number))
  const head = rows.find((r) => r.length === 2)!
  const all = rows.filter((r) => r.length === 7).map(([no, x, y, demand, ready, due, service]) => ({ no: no!, x: x!, y: y!, demand: demand!, ready: ready!, due: due!, service: service! }))
  const depot = all.find((c) => c.no === 0)!
  return { vehicles: head[0]!, capacity: head[1]!, depot, customers: new Map(all.filter((c) => c.no !== 0).map((c) => [c.no, c])) }
}

export interface SolomonCheck { errors: string[]; distance: number }

/** `{vehicles, distance, unassigned, routes}` against the instance: every customer once, load, windows, depot window, distance. */
export function checkSolomon(file: SolomonFile, answer: { vehicles: number; distance: number; unassigned: unknown[]; routes: number[][] }): SolomonCheck {
  const errors: string[] = []
  const seen = new Map<number, number>()
  let total = 0
  const between = (a: Customer, b: Customer) => Math.sqrt((a.x - b.x) ** 2 + (a.y - b.y) ** 2)
  answer.routes.forEach((route, r) => {
    if (route.length === 0) errors.push(`route ${r} is empty`)
    let time = file.depot.ready
    let load = 0
    let here = file.depot
    for (const no of route) {
      const c = file.customers.get(no)
      if (!c) { errors.push(`route ${r}: unknown customer ${no}`); continue }
      seen.set(no, (seen.get(no) ?? 0) + 1)
      const leg = between(here, c)
      total += leg
      const start = Math.max(time + leg, c.ready)
      if (start > c.due + EPS) errors.push(`route ${r}: customer ${no} served at ${start.toFixed(2)} after its due date ${c.due}`)
      time = start + c.service
      load += c.demand
      here = c
    }
    const back = between(here, file.depot)
    total += back
    if (time + back > file.depot.due + EPS) errors.push(`route ${r}: back at the depot at ${(time + back).toFixed(2)} after ${file.depot.due}`)
    if (load > file.capacity) errors.push(`route ${r}: load ${load} over the capacity ${file.capacity}`)
  })
  for (const no of file.customers.keys()) {
    const n = seen.get(no) ?? 0
    if (n !== 1) errors.push(`customer ${no} visited ${n} times`)
  }
  if (answer.unassigned.length > 0) errors.push(`unassigned: ${JSON.stringify(answer.unassigned)}`)
  if (answer.routes.length > file.vehicles) errors.push(`${answer.routes.length} routes for ${file.vehicles} vehicles`)
  if (answer.vehicles !== answer.routes.length) errors.push(`vehicles ${answer.vehicles} but ${answer.routes.length} routes`)
  if (Math.abs(total - answer.distance) > 1e-6 * Math.max(1, total)) errors.push(`distance reported ${answer.distance}, recomputed ${total}`)
  return { errors, distance: total }
}

interface Stop { kind: 'job' | 'pickup' | 'delivery'; id: number; location: number; service: number; windows: [number, number][]; startLoad: number[]; change: number[]; shipment?: number }

type StopTable = { dims: number; stops: Map<string, Stop> }
const key = (kind: string, id: number) => `${kind}:${id}`
const travel = (m: ArrayLike<number>[] | undefined, a: number | undefined, b: number | undefined) => (a === undefined || b === undefined || !m ? 0 : Number(m[a]![b]))

function stopTable(problem: Problem): StopTable {
  const dims = Math.max(1, ...problem.vehicles.map((v) => v.capacity?.length ?? 0))
  const pad = (a: number[] | undefined) => Array.from({ length: dims }, (_, d) => a?.[d] ?? 0)
  const stops = new Map<string, Stop>()
  for (const j of problem.jobs ?? []) {
    stops.set(key('job', j.id), { kind: 'job', id: j.id, location: j.location_index, service: j.service ?? 0, windows: j.time_windows ?? [], startLoad: pad(j.delivery), change: pad(j.pickup).map((p, d) => p - pad(j.delivery)[d]!) })
  }
  ;(problem.shipments ?? []).forEach((s, i) => {
    const amount = pad(s.amount)
    stops.set(key('pickup', s.pickup.id), { kind: 'pickup', id: s.pickup.id, location: s.pickup.location_index, service: s.pickup.service ?? 0, windows: s.pickup.time_windows ?? [], startLoad: pad([]), change: amount, shipment: i })
    stops.set(key('delivery', s.delivery.id), { kind: 'delivery', id: s.delivery.id, location: s.delivery.location_index, service: s.delivery.service ?? 0, windows: s.delivery.time_windows ?? [], startLoad: pad([]), change: amount.map((a) => -a), shipment: i })
  })
  return { dims, stops }
}

/** Load, pairing and the re-simulated schedule of one vehicle visiting `visits` in order. */
function routeErrors(problem: Problem, dims: number, vehicle: Problem['vehicles'][number], visits: Stop[]): { errors: string[]; distance: number } {
  const errors: string[] = []
  const distances = problem.matrices.distances ?? problem.matrices.durations
  const cap = Array.from({ length: dims }, (_, d) => vehicle.capacity?.[d] ?? Infinity)
  const [shiftStart, shiftEnd] = vehicle.time_window ?? [0, Infinity]
  // load
  const load = Array.from({ length: dims }, (_, d) => visits.reduce((a, s) => a + s.startLoad[d]!, 0))
  if (load.some((l, d) => l > cap[d]! + EPS)) errors.push(`vehicle ${vehicle.id}: ${JSON.stringify(load)} at the start over ${JSON.stringify(cap)}`)
  const picked = new Set<number>()
  for (const s of visits) {
    s.change.forEach((c, d) => { load[d] = load[d]! + c })
    if (load.some((l, d) => l > cap[d]! + EPS)) errors.push(`vehicle ${vehicle.id}: load ${JSON.stringify(load)} after ${s.kind} ${s.id} over ${JSON.stringify(cap)}`)
    if (s.kind === 'pickup') picked.add(s.shipment!)
    if (s.kind === 'delivery' && !picked.has(s.shipment!)) errors.push(`vehicle ${vehicle.id}: delivery ${s.id} before (or without) its pickup`)
    if (s.kind === 'pickup') {
      const later = visits.slice(visits.indexOf(s) + 1).some((x) => x.kind === 'delivery' && x.shipment === s.shipment)
      if (!later) errors.push(`vehicle ${vehicle.id}: pickup ${s.id} without its delivery after it`)
    }
  }
  // schedule, re-simulated: earliest service everywhere
  let time = shiftStart
  let at = vehicle.start_index
  let distance = 0
  for (const s of visits) {
    const arrival = time + travel(problem.matrices.durations, at, s.location)
    distance += travel(distances, at, s.location)
    const windows = s.windows.length > 0 ? s.windows : [[0, Infinity] as [number, number]]
    const fit = windows.filter(([, l]) => l >= arrival - EPS).map(([e]) => Math.max(e, arrival)).sort((a, b) => a - b)[0]
    if (fit === undefined) { errors.push(`vehicle ${vehicle.id}: ${s.kind} ${s.id} reached at ${arrival} after its windows ${JSON.stringify(windows)}`); time = arrival } else time = fit
    time += s.service
    at = s.location
  }
  const back = time + travel(problem.matrices.durations, at, vehicle.end_index)
  distance += travel(distances, at, vehicle.end_index)
  if (back > shiftEnd + EPS) errors.push(`vehicle ${vehicle.id}: ends at ${back} after its shift ${shiftEnd}`)
  return { errors, distance }
}

/** Whether `vehicle` can serve `sequence` (steps by type and id) in that order, by the checker's own simulation. */
export function canServe(problem: Problem, vehicleId: number, sequence: { type: string; id?: number }[]): boolean {
  const { dims, stops } = stopTable(problem)
  const vehicle = problem.vehicles.find((v) => v.id === vehicleId)!
  const visits = sequence.map((s) => stops.get(key(s.type, s.id!))!)
  return routeErrors(problem, dims, vehicle, visits).errors.length === 0
}

/**
 * A solution in VROOM's shape against its problem: every job and shipment step exactly once
 * (served or unassigned), a shipment's pickup before its delivery on one vehicle, the load in
 * every dimension within capacity at every point, the schedule re-simulated from the shift's
 * start (waiting allowed) with every service inside a window and the end inside the shift, and
 * the reported distances recomputed.
 */
export function checkPlan(problem: Problem, solution: Solution): string[] {
  const errors: string[] = []
  const { dims, stops } = stopTable(problem)
  const count = new Map<string, number>()
  const bump = (k: string) => count.set(k, (count.get(k) ?? 0) + 1)
  let totalDistance = 0
  const usedVehicles = new Set<number>()
  for (const route of solution.routes) {
    const vehicle = problem.vehicles.find((v) => v.id === route.vehicle)
    if (!vehicle) { errors.push(`route for unknown vehicle ${route.vehicle}`); continue }
    if (usedVehicles.has(vehicle.id)) errors.push(`vehicle ${vehicle.id} has two routes`)
    usedVehicles.add(vehicle.id)
    const [shiftStart, shiftEnd] = vehicle.time_window ?? [0, Infinity]
    const visits = route.steps.filter((s) => s.type !== 'start' && s.type !== 'end').map((s) => {
      const stop = stops.get(key(s.type, s.id!))
      if (!stop || stop.kind !== s.type) errors.push(`vehicle ${vehicle.id}: unknown ${s.type} ${s.id}`)
      else bump(key(s.type, s.id!))
      return stop
    }).filter((s): s is Stop => s !== undefined)
    const checked = routeErrors(problem, dims, vehicle, visits)
    errors.push(...checked.errors)
    const distance = checked.distance
    if (Math.abs(distance - route.distance) > EPS * Math.max(1, distance)) errors.push(`vehicle ${vehicle.id}: distance ${route.distance}, recomputed ${distance}`)
    totalDistance += distance
    // the reported schedule itself: no step before the previous one is done and the drive is over,
    // service inside a window, the whole route inside the shift
    const first = route.steps[0]!
    if (first.service_start < shiftStart - EPS) errors.push(`vehicle ${vehicle.id}: leaves at ${first.service_start} before its shift ${shiftStart}`)
    let ready = first.service_start
    let from = vehicle.start_index
    for (const step of route.steps.slice(1)) {
      const stop = step.type === 'end' ? undefined : stops.get(key(step.type, step.id!))
      const to = step.type === 'end' ? vehicle.end_index : stop?.location
      if (step.arrival < ready + travel(problem.matrices.durations, from, to) - EPS) errors.push(`vehicle ${vehicle.id}: ${step.type} ${step.id ?? ''} reported at ${step.arrival}, too soon`)
      if (step.service_start < step.arrival - EPS) errors.push(`vehicle ${vehicle.id}: ${step.type} ${step.id ?? ''} served before arrival`)
      if (stop) {
        const windows = stop.windows.length > 0 ? stop.windows : [[0, Infinity] as [number, number]]
        if (!windows.some(([e, l]) => step.service_start >= e - EPS && step.service_start <= l + EPS)) errors.push(`vehicle ${vehicle.id}: ${step.type} ${step.id} reported served at ${step.service_start} outside ${JSON.stringify(windows)}`)
      } else if (step.arrival > shiftEnd + EPS) errors.push(`vehicle ${vehicle.id}: reported back at ${step.arrival} after its shift ${shiftEnd}`)
      ready = step.service_start + (stop?.service ?? 0)
      from = to
    }
  }
  for (const u of solution.unassigned) bump(key(u.type, u.id))
  for (const [k] of stops) if (count.get(k) !== 1) errors.push(`${k} appears ${count.get(k) ?? 0} times`)
  if (Math.abs(totalDistance - solution.summary.distance) > EPS * Math.max(1, totalDistance)) errors.push(`summary distance ${solution.summary.distance}, recomputed ${totalDistance}`)
  return errors
}
