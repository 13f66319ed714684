// VRPTW benchmark (issue "Route planning"): the six Solomon instances in ../shared/data/solomon,
// each solved for --seconds (default 5) with --seed (default 1), checked by the test suite's
// independent checker, against the best-known distance (BKS.json `<name>_distance`).
//
//   npx tsx test/bench/vrptw.bench.ts [--seconds 5] [--seed 1] [C101 …]
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { parseSolomon, solomonAnswer, solomonProblem, solve } from '../../src/planning/index.js'
import { checkSolomon, readSolomonFile } from '../planning/feasibility.js'
import { repoRoot } from '../helpers/cli-process.js'

const DATA = join(repoRoot, '..', 'shared', 'data', 'solomon')
const { values, positionals } = parseArgs({ allowPositionals: true, options: { seconds: { type: 'string' }, seed: { type: 'string' } } })
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
