import t from 'tap'
import { haversineMatrix, haversineMeters, planTasks, type PlanningTask } from '../../src/planning/index.js'

t.test('haversine: a degree of latitude is about 111.2 km, and 30 km/h covers it in about 3 h 42 min', async (t) => {
  const m = haversineMeters({ lat: 0, lng: 0 }, { lat: 1, lng: 0 })
  t.ok(Math.abs(m - 111_195) < 10, `${m} m`)
  const { distances, durations } = haversineMatrix([{ lat: 0, lng: 0 }, { lat: 1, lng: 0 }], 30)
  t.equal(distances[0]![1], 111_195)
  t.equal(durations[1]![0], Math.round(111_195 / (30 / 3.6)))
  t.equal(durations[0]![0], 0)
})

const DEPOT = { lat: -31.4201, lng: -64.1888 } // Córdoba
const DAY = Date.UTC(2026, 11, 1) / 1000

/** 40 tasks within ~5 km, windows across the day, loads [grams, parcels]. */
function tomorrow(): PlanningTask[] {
  return Array.from({ length: 40 }, (_, i) => {
    const angle = (i * 137.5 * Math.PI) / 180
    const r = 0.005 + 0.04 * ((i * 7) % 40) / 40
    const from = DAY + 8 * 3600 + (i % 4) * 2 * 3600
    return {
      id: `task-${i}`,
      lat: DEPOT.lat + r * Math.sin(angle),
      lng: DEPOT.lng + r * Math.cos(angle),
      service_s: 300,
      time_windows: [{ from, to: from + 3 * 3600 }],
      load: [2_000 + 100 * i, 1],
    }
  })
}

t.test("tomorrow's 40 tasks over 3 vans: every task placed once, inside its window and the vans' shifts and capacity", async (t) => {
  const tasks = tomorrow()
  const vans = ['van-1', 'van-2', 'van-3'].map((id) => ({ id, start: DEPOT, end: DEPOT, capacity: [60_000, null], shift: { from: DAY + 7 * 3600, to: DAY + 19 * 3600 } }))
  const plan = planTasks({ tasks, vehicles: vans, iterations: 2000, seed: 1 })
  t.same(plan.unassigned, [])
  const placed = plan.routes.flatMap((r) => r.stops.map((s) => s.task_id)).sort()
  t.same(placed, tasks.map((x) => x.id).sort())
  for (const route of plan.routes) {
    const grams = route.stops.reduce((a, s) => a + tasks.find((x) => x.id === s.task_id)!.load![0]!, 0)
    t.ok(grams <= 60_000, `${route.vehicle_id} carries ${grams} g`)
    t.ok(route.start >= DAY + 7 * 3600 && route.end <= DAY + 19 * 3600, `${route.vehicle_id} within its shift`)
    let previous = route.start
    for (const s of route.stops) {
      const w = tasks.find((x) => x.id === s.task_id)!.time_windows![0]!
      t.ok(s.service_start >= w.from && s.service_start <= w.to, `${s.task_id} in its window`)
      t.ok(s.arrival >= previous && s.service_start >= s.arrival && s.departure === s.service_start + 300)
      previous = s.departure
    }
  }
  t.ok(plan.distance_m > 0 && plan.duration_s > 0)
  t.equal(plan.distance_m, plan.routes.reduce((a, r) => a + r.distance_m, 0))
})

t.test('a pickup and its delivery ride together, pickup first; an unreachable task comes back with its reason', async (t) => {
  const near = (d: number) => ({ lat: DEPOT.lat + d, lng: DEPOT.lng })
  const plan = planTasks({
    tasks: [
      { id: 'late', ...near(0.3), time_windows: [{ from: DAY + 8 * 3600, to: DAY + 8 * 3600 + 60 }] },
      { id: 'heavy', ...near(0.01), load: [500_000] },
    ],
    pairs: [{ pickup: { id: 'collect', ...near(0.02), load: [1_000] }, delivery: { id: 'drop', ...near(-0.02) } }],
    vehicles: [{ id: 'van', start: DEPOT, end: DEPOT, capacity: [10_000], shift: { from: DAY + 8 * 3600, to: DAY + 18 * 3600 } }],
    iterations: 200,
  })
  t.same(plan.unassigned.sort((a, b) => a.task_id.localeCompare(b.task_id)), [
    { task_id: 'heavy', reason: 'capacity' },
    { task_id: 'late', reason: 'time_window' },
  ])
  t.same(plan.routes[0]!.stops.map((s) => s.task_id), ['collect', 'drop'])
})
