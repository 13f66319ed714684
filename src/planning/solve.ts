import { diagnose } from './diagnose.js'
import { compile, KIND_JOB, KIND_PICKUP, type Instance } from './instance.js'
import type { Problem, Route, Solution, SolveOptions, Step, Unassigned } from './model.js'
import { RouteState } from './routes.js'
import { search } from './search.js'

/**
 * Plans `problem`: as many jobs and shipments served as possible, then the least travel time.
 * With `iterations` and no `seconds` the answer depends only on the input and the seed.
 */
export function solve(problem: Problem, options: SolveOptions = {}): Solution {
  const started = performance.now()
  const inst = compile(problem, options.objective)
  const iterations = options.iterations ?? Infinity
  const seconds = options.seconds ?? (options.iterations === undefined ? 1 : Infinity)
  // the limit covers the whole call: what compiling took comes off the search's share
  const left = Math.max(0, seconds - (performance.now() - started) / 1000)
  const found = search(inst, { seconds: left, iterations, seed: options.seed ?? 1 })

  const routes: Route[] = []
  found.routes.forEach((tasks, v) => {
    if (tasks.length === 0) return
    const state = new RouteState(inst, v)
    state.setTasks(tasks, tasks.length)
    routes.push(describe(inst, state))
  })
  const seen = new Set<number>()
  const unassigned: Unassigned[] = []
  for (const t of found.unassigned) {
    const req = inst.requestOf[t]!
    if (seen.has(req)) continue
    seen.add(req)
    const second = inst.requestSecond[req]!
    const tasks = second >= 0 ? [inst.requestFirst[req]!, second] : [inst.requestFirst[req]!]
    const reason = diagnose(inst, tasks)
    for (const x of tasks) unassigned.push({ id: inst.taskId[x]!, type: typeName(inst, x), reason })
  }
  const sum = (f: (r: Route) => number) => routes.reduce((a, r) => a + f(r), 0)
  return {
    summary: {
      cost: sum((r) => r.cost),
      routes: routes.length,
      unassigned: unassigned.length,
      distance: sum((r) => r.distance),
      duration: sum((r) => r.duration),
      service: sum((r) => r.service),
      waiting_time: sum((r) => r.waiting_time),
      iterations: found.iterations,
    },
    routes,
    unassigned,
  }
}

function typeName(inst: Instance, t: number): 'job' | 'pickup' | 'delivery' {
  const k = inst.kind[t]
  return k === KIND_JOB ? 'job' : k === KIND_PICKUP ? 'pickup' : 'delivery'
}

function describe(inst: Instance, route: RouteState): Route {
  const size = inst.nLoc
  const dims = inst.dims
  const v = route.vehicle
  const steps: Step[] = []
  let distance = 0
  let service = 0
  let waiting = 0
  const loadAt = (k: number) => Array.from(route.load.subarray(k * dims, (k + 1) * dims))
  const at = (loc: number) => (loc === inst.virtualLoc ? {} : { location_index: loc })
  // leave as late as still reaches the first stop at its earliest service start: no waiting there
  const departure = route.n === 0
    ? route.early[0]!
    : Math.max(route.early[0]!, route.early[1]! - inst.dur[route.locs[0]! * size + route.locs[1]!]!)
  steps.push({ type: 'start', ...at(route.locs[0]!), arrival: departure, service_start: departure, waiting_time: 0, load: loadAt(0), distance: 0 })
  for (let k = 1; k <= route.n + 1; k++) {
    const prev = route.locs[k - 1]!
    const here = route.locs[k]!
    distance += inst.dist[prev * size + here]!
    const arrival = (k === 1 ? departure : route.early[k - 1]!) + route.svcs[k - 1]! + inst.dur[prev * size + here]!
    const start = route.early[k]!
    if (k <= route.n) {
      const t = route.seq[k - 1]!
      service += inst.svc[t]!
      waiting += start - arrival
      steps.push({ type: typeName(inst, t), id: inst.taskId[t]!, ...at(here), arrival, service_start: start, waiting_time: start - arrival, load: loadAt(k), distance })
    } else {
      steps.push({ type: 'end', ...at(here), arrival, service_start: arrival, waiting_time: 0, load: loadAt(route.n), distance })
    }
  }
  const end = steps[steps.length - 1]!.arrival
  return { vehicle: inst.vehicleId[v]!, steps, cost: route.cost, distance, duration: end - departure, service, waiting_time: waiting }
}


