import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { parseSolomon, solomonAnswer, solomonProblem, solve } from '../planning/index.js'
import { messageOf } from '../shared/thrown.js'

const USAGE = `usage: npm run vrptw -- <Solomon file> [--seconds S] [--seed N] [--iterations N]
  Solves the instance (distance = Euclidean, not rounded; travel time = distance) and prints one
  JSON object {vehicles, distance, unassigned, routes}, routes as customer numbers in visit order.
  --seconds     time limit (default 5)
  --seed        random seed (default 1)
  --iterations  stop after N iterations instead (with no --seconds: repeatable output)`

function main(): void {
  let parsed
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        seconds: { type: 'string' },
        seed: { type: 'string' },
        iterations: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    })
  } catch (err) {
    process.stderr.write(`${messageOf(err)}\n${USAGE}\n`)
    process.exit(2)
  }
  const { values, positionals } = parsed
  if (values.help) { process.stdout.write(`${USAGE}\n`); return }
  if (positionals.length !== 1) {
    process.stderr.write(`${USAGE}\n`)
    process.exit(2)
  }
  const number = (raw: string | undefined, name: string, ok: (n: number) => boolean): number | undefined => {
    if (raw === undefined) return undefined
    const n = Number(raw)
    if (!ok(n)) {
      process.stderr.write(`--${name}: invalid value "${raw}"\n`)
      process.exit(2)
    }
    return n
  }
  const iterations = number(values.iterations, 'iterations', (n) => Number.isInteger(n) && n >= 0)
  const seconds = number(values.seconds, 'seconds', (n) => n > 0) ?? (iterations === undefined ? 5 : undefined)
  const seed = number(values.seed, 'seed', Number.isInteger) ?? 1
  let text: string
  try {
    text = readFileSync(positionals[0]!, 'utf8')
  } catch (err) {
    process.stderr.write(`${messageOf(err)}\n`)
    process.exit(1)
  }
  const solution = solve(solomonProblem(parseSolomon(text)), { seconds, iterations, seed })
  process.stdout.write(`${JSON.stringify(solomonAnswer(solution))}\n`)
}

main()
