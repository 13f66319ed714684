// VRPTW benchmark (issue "Route planning"): the six Solomon instances in ../shared/data/solomon,
// each solved for --seconds (default 5) with --seed (default 1), checked by the test suite's
// independent checker, against the best-known distance (BKS.json `<name>_distance`).
//
//   npx tsx test/bench/vrptw.bench.ts [--seconds 5] [--seed 1] [--plan] [C101 …]
// --plan adds planTasks (the entry for POST /routes/plan) on 1,000 tasks with 2-hour windows over
// 20 vans around Córdoba, in process: the time to answer and the share of tasks placed.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { parseSolomon, planTasks, solomonAnswer, solomonProblem, solve } from '../../src/planning/index.js'
import { checkSolomon, readSolomonFile } from '../planning/feasibility.js'
import { repoRoot } from '../helpers/cli-process.js'

const DATA = join(repoRoot, 'test', 'planning', 'solomon')
const { values, positionals } = parseArgs({ allowPositionals: true, options: { seconds: { type: 'string' }, seed: { type: 'string' }, plan: { type: 'boolean' } } })
const seconds = Number(values.seconds ?? 5)
const seed = Number(values.seed ?? 1)
const names = positionals.length > 0 ? positionals : ['C101', 'C201', 'R101', 'R201', 'RC101', 'RC201']
const bks = JSON.parse(readFileSync(join(DATA, 'BKS.json'), 'utf8')) as Record<string, { best_known_cost: number; solved_with_vehicles: number }>

const pad = (s: string | number, n: number) => String(s).padStart(n)
console.log(`VRPTW, Solomon, ${seconds} s per instance, seed ${seed}`)
console.log(`${'instance'.padEnd(9)}${pad('vehicles', 9)}${pad('BKS', 5)}${pad('distance', 10)}${pad('BKS', 10)}${pad('gap %', 8)}${pad('time s', 8)}${pad('iterations', 11)}  feasible`)
const gaps: number[] = []
for (const name of names) {
  const text = readFileSync(join(DATA, `${name}.txt`), 'utf8')
  const started = performance.now()
  const solution = solve(solomonProblem(parseSolomon(text)), { seconds, seed })
  const elapsed = (performance.now() - started) / 1000
  const answer = solomonAnswer(solution)
  const check = checkSolomon(readSolomonFile(text), answer)
  const best = bks[`${name}_distance`]!
  const gap = Math.round((1e4 * (answer.distance - best.best_known_cost)) / best.best_known_cost) / 100 || 0
  gaps.push(gap)
  console.log(`${name.padEnd(9)}${pad(answer.vehicles, 9)}${pad(best.solved_with_vehicles, 5)}${pad(answer.distance.toFixed(2), 10)}${pad(best.best_known_cost.toFixed(2), 10)}${pad(gap.toFixed(2), 8)}${pad(elapsed.toFixed(2), 8)}${pad(solution.summary.iterations, 11)}  ${check.errors.length === 0 ? 'yes' : `NO: ${check.errors.slice(0, 3).join('; ')}`}`)
}
const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length
console.log(`mean gap ${mean.toFixed(2)} %, worst ${Math.max(...gaps).toFixed(2)} % (goal: mean ≤ 2 %, none > 5 %)`)

if (values.plan) {
  const depot = { lat: -31.4201, lng: -64.1888 }
  const day = Date.UTC(2026, 11, 1) / 1000
  let state = seed >>> 0
  const rnd = () => { state = (Math.imul(state, 1664525) + 1013904223) >>> 0; return state / 4294967296 }
  const tasks = Array.from({ length: 1000 }, (_, i) => {
    const from = day + 8 * 3600 + Math.floor(rnd() * 8) * 3600
    return { id: `t${i}`, lat: depot.lat + (rnd() - 0.5) * 0.15, lng: depot.lng + (rnd() - 0.5) * 0.15, service_s: 180, time_windows: [{ from, to: from + 2 * 3600 }], load: [1000 + Math.floor(rnd() * 5000), 1] }
  })
  const vehicles = Array.from({ length: 20 }, (_, i) => ({ id: `v${i}`, start: depot, end: depot, capacity: [400_000, null], shift: { from: day + 7 * 3600, to: day + 19 * 3600 } }))
  const started = performance.now()
  const plan = planTasks({ tasks, vehicles, seconds, seed })
  const elapsed = (performance.now() - started) / 1000
  const placed = tasks.length - plan.unassigned.length
  console.log(`planTasks: 1,000 tasks, 20 vans, 2-hour windows from 8 to 18 h, a 17 × 14 km area, 30 km/h: answer in ${elapsed.toFixed(2)} s, ${placed} placed (${((100 * placed) / tasks.length).toFixed(1)} %), ${plan.routes.length} routes, ${(plan.distance_m / 1000).toFixed(1)} km`)
}
