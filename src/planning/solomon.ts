// Solomon's VRPTW instance format (1987): a vehicle count and capacity, then one line per
// customer (0 is the depot): number, x, y, demand, ready time, due date, service time.
import { euclideanMatrix } from './matrix.js'
import type { Problem, Solution } from './model.js'

export interface SolomonCustomer {
  number: number
  x: number
  y: number
  demand: number
  ready: number
  due: number
  service: number
}

export interface SolomonInstance {
  name: string
  vehicles: number
  capacity: number
  /** The depot first, then the customers in file order. */
  customers: SolomonCustomer[]
}

export function parseSolomon(text: string): SolomonInstance {
  const lines = text.split(/\r?\n/).map((l) => l.trim())
  const name = lines.find((l) => l.length > 0) ?? ''
  const numeric = lines.filter((l) => /^[\d.\s-]+$/.test(l) && l.length > 0).map((l) => l.split(/\s+/).map(Number))
  const head = numeric.find((row) => row.length === 2)
  if (!head) throw new SyntaxError('Solomon file: no "vehicle number, capacity" line')
  const customers = numeric.filter((row) => row.length === 7).map(([number, x, y, demand, ready, due, service]) => ({
    number: number!, x: x!, y: y!, demand: demand!, ready: ready!, due: due!, service: service!,
  }))
  if (customers.length < 2 || customers[0]!.number !== 0) throw new SyntaxError('Solomon file: expected the depot (customer 0) and at least one customer')
  return { name, vehicles: head[0]!, capacity: head[1]!, customers }
}

/** The instance as a planning problem: location i is the file's i-th customer line, jobs keep their numbers as ids. */
export function solomonProblem(instance: SolomonInstance): Problem {
  const [depot, ...rest] = instance.customers
  const durations = euclideanMatrix(instance.customers)
  return {
    jobs: rest.map((c, i) => ({
      id: c.number,
      location_index: i + 1,
      service: c.service,
      delivery: [c.demand],
      time_windows: [[c.ready, c.due]],
    })),
    vehicles: Array.from({ length: instance.vehicles }, (_, v) => ({
      id: v + 1,
      start_index: 0,
      end_index: 0,
      capacity: [instance.capacity],
      time_window: [depot!.ready, depot!.due],
    })),
    matrices: { durations },
  }
}

export interface SolomonAnswer {
  vehicles: number
  distance: number
  unassigned: number[]
  /** Customer numbers per vehicle, in visit order. */
  routes: number[][]
}

export function solomonAnswer(solution: Solution): SolomonAnswer {
  return {
    vehicles: solution.routes.length,
    distance: solution.summary.distance,
    unassigned: solution.unassigned.map((u) => u.id),
    routes: solution.routes.map((r) => r.steps.filter((s) => s.type === 'job').map((s) => s.id!)),
  }
}
