import t from 'tap'
import { euclideanMatrix, solve, type Problem } from '../../src/planning/index.js'
import { canServe, checkPlan } from './feasibility.js'

/** A small seeded generator for the random instances (independent of the solver's). */
function lcg(seed: number) {
  let s = seed >>> 0
  return () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 4294967296 }
}

function randomProblem(seed: number): Problem {
  const rnd = lcg(seed)
  const int = (a: number, b: number) => a + Math.floor(rnd() * (b - a + 1))
  const nJobs = int(4, 12)
  const nShipments = int(1, 4)
  const points = Array.from({ length: 1 + nJobs + 2 * nShipments }, () => ({ x: int(0, 100), y: int(0, 100) }))
  const window = (): [number, number][] | undefined => {
    const r = rnd()
    if (r < 0.3) return undefined
    const a = int(0, 300)
    if (r < 0.75) return [[a, a + int(20, 120)]]
    if (r < 0.9) return [[a, a + 30], [a + 100, a + 160]]
    return [[a, a + 120], [a + 20, a + 40]] // overlapping
  }
  let loc = 1
  return {
    jobs: Array.from({ length: nJobs }, (_, i) => ({
      id: 100 + i,
      location_index: loc++,
      service: int(0, 10),
      delivery: [int(0, 4), int(0, 3)],
      pickup: [int(0, 2), int(0, 2)],
      time_windows: window(),
    })),
    shipments: Array.from({ length: nShipments }, (_, i) => ({
      amount: [int(1, 4), int(0, 3)],
      pickup: { id: 200 + i, location_index: loc++, service: int(0, 10), time_windows: window() },
      delivery: { id: 300 + i, location_index: loc++, service: int(0, 10), time_windows: window() },
    })),
    vehicles: Array.from({ length: int(1, 3) }, (_, v) => ({
      id: v + 1,
      start_index: 0,
      end_index: rnd() < 0.7 ? 0 : undefined,
      capacity: [int(6, 15), int(4, 10)],
      time_window: [0, int(400, 600)] as [number, number],
    })),
    // every other instance: an asymmetric matrix that breaks the triangle inequality (as rounded
    // seconds do), where taking a stop out of a route can make the rest later
    matrices: { durations: seed % 2 === 0 ? euclideanMatrix(points) : euclideanMatrix(points).map((row) => row.map((d) => (d === 0 ? 0 : rnd() < 0.3 ? 4 * Math.round(d) : Math.round(d)))) },
  }
}

t.test('random instances with pickup-and-delivery pairs and two load dimensions: every plan is feasible', async (t) => {
  let served = 0
  let left = 0
  for (let seed = 1; seed <= 40; seed++) {
    const problem = randomProblem(seed)
    const solution = solve(problem, { iterations: 300, seed })
    t.same(checkPlan(problem, solution), [], `instance ${seed}`)
    served += solution.routes.reduce((a, r) => a + r.steps.length - 2, 0)
    left += solution.unassigned.length
  }
  // the generator is meant to leave some out and serve most: both paths are exercised
  t.ok(served > left, `${served} stops served, ${left} left out`)
  t.ok(left > 0, 'some instances have stops that cannot all be served')
})

t.test("random instances: nothing left out fits anywhere in the plan (by the checker's own simulation)", async (t) => {
  let tried = 0
  for (let seed = 1; seed <= 40; seed++) {
    const problem = randomProblem(seed)
    const solution = solve(problem, { iterations: 300, seed })
    const sequences = new Map(problem.vehicles.map((v) => [v.id, [] as { type: string; id?: number }[]]))
    for (const r of solution.routes) sequences.set(r.vehicle, r.steps.filter((s) => s.type !== 'start' && s.type !== 'end'))
    const jobs = solution.unassigned.filter((u) => u.type === 'job')
    const pickups = solution.unassigned.filter((u) => u.type === 'pickup')
    for (const [vehicle, seq] of sequences) {
      for (let p = 0; p <= seq.length; p++) {
        for (const u of jobs) {
          tried++
          t.notOk(canServe(problem, vehicle, [...seq.slice(0, p), { type: 'job', id: u.id }, ...seq.slice(p)]), `instance ${seed}: job ${u.id} fits vehicle ${vehicle} at ${p}`)
        }
        for (const u of pickups) {
          const delivery = problem.shipments!.find((s) => s.pickup.id === u.id)!.delivery.id
          for (let q = p; q <= seq.length; q++) {
            tried++
            const withPair = [...seq.slice(0, p), { type: 'pickup', id: u.id }, ...seq.slice(p, q), { type: 'delivery', id: delivery }, ...seq.slice(q)]
            t.notOk(canServe(problem, vehicle, withPair), `instance ${seed}: shipment ${u.id} fits vehicle ${vehicle} at ${p}, ${q}`)
          }
        }
      }
    }
  }
  t.ok(tried > 100, `${tried} insertions tried`)
})

t.test('the checker itself catches a delivery before its pickup and a load over capacity', async (t) => {
  const points = [{ x: 0, y: 0 }, { x: 10, y: 0 }, { x: 20, y: 0 }]
  const problem: Problem = {
    shipments: [{ amount: [5], pickup: { id: 1, location_index: 1 }, delivery: { id: 2, location_index: 2 } }],
    vehicles: [{ id: 1, start_index: 0, end_index: 0, capacity: [5] }],
    matrices: { durations: euclideanMatrix(points) },
  }
  const solution = solve(problem, { iterations: 50, seed: 1 })
  t.same(checkPlan(problem, solution), [])
  t.same(solution.routes[0]!.steps.map((s) => s.type), ['start', 'pickup', 'delivery', 'end'])
  const swapped = structuredClone(solution)
  const steps = swapped.routes[0]!.steps
  ;[steps[1], steps[2]] = [steps[2]!, steps[1]!]
  t.match(checkPlan(problem, swapped).join('\n'), /delivery 2 before/)
  const heavier = structuredClone(problem)
  heavier.vehicles[0]!.capacity = [4]
  t.match(checkPlan(heavier, solution).join('\n'), /over/)
})

t.test('a pickup far out and its delivery at the depot: the pickup still comes first', async (t) => {
  const points = [{ x: 0, y: 0 }, { x: 50, y: 0 }, { x: 1, y: 0 }, { x: 25, y: 0 }]
  const problem: Problem = {
    jobs: [{ id: 7, location_index: 3, delivery: [1] }],
    shipments: [{ amount: [1], pickup: { id: 1, location_index: 1 }, delivery: { id: 1, location_index: 2 } }],
    vehicles: [{ id: 1, start_index: 0, end_index: 0, capacity: [2] }],
    matrices: { durations: euclideanMatrix(points) },
  }
  const solution = solve(problem, { iterations: 100, seed: 3 })
  t.same(checkPlan(problem, solution), [])
  t.equal(solution.unassigned.length, 0)
  const order = solution.routes[0]!.steps.map((s) => s.type)
  t.ok(order.indexOf('pickup') < order.indexOf('delivery'), order.join(' → '))
})

t.test('the same input, seed and iteration budget give the same plan', async (t) => {
  const problem = randomProblem(7)
  const a = solve(problem, { iterations: 500, seed: 42 })
  const b = solve(problem, { iterations: 500, seed: 42 })
  t.same(b, a)
  t.equal(a.summary.iterations, 500)
})

t.test('an unreachable window, too heavy a load, outside the shift: each left out with its reason', async (t) => {
  // depot 0; 1 is 100 away; 2 and 3 are 10 away on either side of it
  const points = [{ x: 0, y: 0 }, { x: 100, y: 0 }, { x: 10, y: 0 }, { x: -10, y: 0 }, { x: 0, y: 10 }, { x: 0, y: -10 }]
  const problem: Problem = {
    jobs: [
      { id: 1, location_index: 1, time_windows: [[0, 50]] },
      { id: 2, location_index: 4, delivery: [11] },
      { id: 3, location_index: 4, delivery: [1, 9] },
      { id: 4, location_index: 5, time_windows: [[2000, 2100]] },
      // each reachable alone but not both with one vehicle: a window at exactly t = 10 on either side
      { id: 5, location_index: 2, time_windows: [[10, 10]] },
      { id: 6, location_index: 3, time_windows: [[10, 10]] },
      { id: 8, location_index: 4, delivery: [2, 1] },
    ],
    shipments: [{ amount: [20], pickup: { id: 9, location_index: 2 }, delivery: { id: 9, location_index: 3 } }],
    vehicles: [{ id: 1, start_index: 0, end_index: 0, capacity: [10, 8], time_window: [0, 1000] }],
    matrices: { durations: euclideanMatrix(points) },
  }
  const solution = solve(problem, { iterations: 200, seed: 1 })
  t.same(checkPlan(problem, solution), [])
  const reason = (type: string, id: number) => solution.unassigned.find((u) => u.type === type && u.id === id)?.reason
  t.equal(reason('job', 1), 'time_window')
  t.equal(reason('job', 2), 'capacity')
  t.equal(reason('job', 3), 'capacity', 'the second dimension is over')
  t.equal(reason('job', 4), 'shift')
  t.equal(reason('pickup', 9), 'capacity')
  t.equal(reason('delivery', 9), 'capacity')
  t.equal(reason('job', 8), undefined, 'job 8 fits and is served')
  const left = [reason('job', 5), reason('job', 6)].filter((r) => r !== undefined)
  t.same(left, ['fleet'], 'one of 5 and 6 is served, the other did not fit beside it')
})

t.test('serving more jobs comes before travelling less', async (t) => {
  // a detour to a far job is worth it as long as the job can be served
  const points = [{ x: 0, y: 0 }, { x: 1, y: 0 }, { x: 400, y: 0 }]
  const problem: Problem = {
    jobs: [{ id: 1, location_index: 1 }, { id: 2, location_index: 2 }],
    vehicles: [{ id: 1, start_index: 0, end_index: 0, time_window: [0, 800] }],
    matrices: { durations: euclideanMatrix(points) },
  }
  const solution = solve(problem, { iterations: 100, seed: 1 })
  t.equal(solution.unassigned.length, 0)
  t.equal(solution.summary.distance, 800)
})

t.test('a vehicle without an end finishes at its last stop; one without a start begins at its first', async (t) => {
  const points = [{ x: 0, y: 0 }, { x: 10, y: 0 }, { x: 20, y: 0 }]
  const open: Problem = {
    jobs: [{ id: 1, location_index: 1 }, { id: 2, location_index: 2 }],
    vehicles: [{ id: 1, start_index: 0 }],
    matrices: { durations: euclideanMatrix(points) },
  }
  const a = solve(open, { iterations: 100, seed: 1 })
  t.equal(a.summary.distance, 20)
  t.same(checkPlan(open, a), [])
  const noStart: Problem = { ...open, vehicles: [{ id: 1, end_index: 0 }] }
  const b = solve(noStart, { iterations: 100, seed: 1 })
  t.equal(b.summary.distance, 20)
  t.same(checkPlan(noStart, b), [])
})

t.test('bad input is refused with a message, not a crash inside the search', async (t) => {
  const durations = euclideanMatrix([{ x: 0, y: 0 }, { x: 1, y: 1 }])
  t.throws(() => solve({ jobs: [{ id: 1, location_index: 5 }], vehicles: [{ id: 1 }], matrices: { durations } }), /outside the matrix/)
  t.throws(() => solve({ jobs: [{ id: 1, location_index: 1, time_windows: [[5, 1]] }], vehicles: [{ id: 1 }], matrices: { durations } }), /ends before it starts/)
  t.throws(() => solve({ jobs: [], vehicles: [], matrices: { durations } }), /vehicles/)
})

t.test('on tiny instances the plan matches exhaustive search: as many jobs as possible, then the shortest', async (t) => {
  for (let seed = 1; seed <= 25; seed++) {
    const rnd = lcg(1000 + seed)
    const int = (a: number, b: number) => a + Math.floor(rnd() * (b - a + 1))
    const n = int(3, 6)
    const points = Array.from({ length: n + 1 }, () => ({ x: int(0, 50), y: int(0, 50) }))
    const jobs = Array.from({ length: n }, (_, i) => {
      const a = int(0, 150)
      return { id: i + 1, location_index: i + 1, service: int(0, 10), delivery: [int(1, 5)], time_windows: [[a, a + int(10, 80)]] as [number, number][] }
    })
    const problem: Problem = { jobs, vehicles: [{ id: 1, start_index: 0, end_index: 0, capacity: [12], time_window: [0, 250] }], matrices: { durations: euclideanMatrix(points) } }
    const m = problem.matrices.durations
    // every ordered subset, simulated directly
    let bestServed = -1
    let bestDistance = Infinity
    const visit = (order: number[], used: Set<number>) => {
      let time = 0
      let at = 0
      let distance = 0
      let load = 0
      for (const j of order) {
        const job = jobs[j]!
        load += job.delivery[0]!
        const arrival = time + Number(m[at]![job.location_index])
        const [[e, l]] = job.time_windows as [[number, number]]
        if (arrival > l || load > 12) return
        distance += Number(m[at]![job.location_index])
        time = Math.max(arrival, e) + job.service
        at = job.location_index
      }
      if (time + Number(m[at]![0]) > 250) return
      distance += Number(m[at]![0])
      if (order.length > bestServed || (order.length === bestServed && distance < bestDistance - 1e-9)) {
        bestServed = order.length
        bestDistance = distance
      }
      for (let j = 0; j < n; j++) {
        if (used.has(j)) continue
        used.add(j)
        visit([...order, j], used)
        used.delete(j)
      }
    }
    visit([], new Set())
    const solution = solve(problem, { iterations: 400, seed })
    t.same(checkPlan(problem, solution), [], `instance ${seed}`)
    t.equal(n - solution.unassigned.length, bestServed, `instance ${seed}: served`)
    t.ok(Math.abs(solution.summary.distance - bestDistance) < 1e-6, `instance ${seed}: distance ${solution.summary.distance} vs ${bestDistance}`)
  }
})

t.test('the vehicle leaves as late as still serves its first stop at the earliest, and the schedule is reported', async (t) => {
  const points = [{ x: 0, y: 0 }, { x: 10, y: 0 }, { x: 20, y: 0 }]
  const problem: Problem = {
    jobs: [{ id: 1, location_index: 1, service: 5, time_windows: [[100, 200]] }, { id: 2, location_index: 2, time_windows: [[150, 160]] }],
    vehicles: [{ id: 1, start_index: 0, end_index: 0, time_window: [0, 1000] }],
    matrices: { durations: euclideanMatrix(points) },
  }
  const solution = solve(problem, { iterations: 50, seed: 1 })
  t.same(checkPlan(problem, solution), [])
  const steps = solution.routes[0]!.steps
  t.same(steps.map((s) => [s.type, s.arrival, s.service_start, s.waiting_time]), [
    ['start', 90, 90, 0],
    ['job', 100, 100, 0],
    ['job', 115, 150, 35],
    ['end', 170, 170, 0],
  ])
  t.equal(solution.routes[0]!.duration, 80)
  t.equal(solution.summary.waiting_time, 35)
})

t.test("objective: least travel time by default, least distance with objective 'distance'", async (t) => {
  // one-way streets: 0→1→2→0 is quick but long, 0→2→1→0 slow but short
  const durations = [[0, 1, 10], [10, 0, 1], [1, 10, 0]]
  const distances = [[0, 10, 1], [1, 0, 10], [10, 1, 0]]
  const problem: Problem = {
    jobs: [{ id: 1, location_index: 1 }, { id: 2, location_index: 2 }],
    vehicles: [{ id: 1, start_index: 0, end_index: 0 }],
    matrices: { durations, distances },
  }
  const order = (objective?: 'duration' | 'distance') => solve(problem, { iterations: 50, seed: 1, objective }).routes[0]!.steps.filter((s) => s.type === 'job').map((s) => s.id)
  t.same(order(), [1, 2])
  t.same(order('distance'), [2, 1])
  const byDistance = solve(problem, { iterations: 50, seed: 1, objective: 'distance' })
  t.equal(byDistance.summary.distance, 3)
  t.equal(byDistance.summary.cost, 3)
  t.same(checkPlan(problem, byDistance), [])
})

t.test('nothing to plan: no routes, nothing unassigned, at once', async (t) => {
  const solution = solve({ jobs: [], vehicles: [{ id: 1, start_index: 0 }], matrices: { durations: [[0]] } }, { seconds: 5 })
  t.same(solution.routes, [])
  t.same(solution.unassigned, [])
  t.equal(solution.summary.iterations, 0)
})
