import { parseArgs } from 'node:util'
import cliProgress from 'cli-progress'
import { randomBytes } from 'node:crypto'
import { ApiClient } from '../simulator/api-client.js'
import { planDay } from '../simulator/day.js'
import { existingRoutes, parseRouteSpec } from '../simulator/existing-routes.js'
import { driveRoute, type DriverEvent } from '../simulator/driver.js'
import { Rng } from '../simulator/random.js'
import { ServerClock } from '../simulator/server-clock.js'
import { messageOf } from '../shared/thrown.js'

const USAGE = `usage: npm run simulate -- --token <organization token> [options]
       npm run simulate -- --route ID:TOKEN [--route ID:TOKEN ...] [options]
  Plans a day through the public API (drivers, vans, deliveries with time windows, POST /routes/plan,
  publish) and drives it: each driver reports a position every few seconds, drives at a speed drawn
  around ROUTING_SPEED_KMH, stays at each stop its duration give or take, and fails a few stops.
  Watch the ETAs on GET /routes/{id}, the progress stream and the task.delayed webhooks meanwhile.
  --base URL            the server (default http://127.0.0.1:$PORT, PORT default 3000)
  --token TOKEN         a carrier organization's token (or $SIM_TOKEN)
  --routes N            routes (drivers and vans), default 3
  --stops N             deliveries per route, default 10
  --clock-rate R        the server's CLOCK_RATE (default 1: real time); the simulator keeps pace with it
  --position-every S    seconds of server time between two positions, default 10
  --speed-kmh V         the speed drivers are drawn around (default 30: the server's ROUTING_SPEED_KMH)
  --late MIN            the first route's driver is held up at its third stop until the stops after it
                        are late: the fourth reached MIN minutes after its window closes (default 60; 0: none)
  --center LAT,LNG      the depot (default Rosario: -32.95,-60.65); stops within --radius-km (default 5)
  --seed N              draws repeat for a seed (default 1)
  --route ID:TOKEN      drive this published route (repeatable) with its driver's token (shown once, when
                        the driver was added) instead of planning a day; nothing is created and no
                        --token is needed. Stops with a city-level address are driven to the city's
                        point, with a warning naming each; a stop with no place to drive to (state- or
                        country-level address) or already under way is named and skipped`

async function main(): Promise<void> {
  let values
  try {
    ({ values } = parseArgs({
      options: {
        base: { type: 'string' }, token: { type: 'string' }, routes: { type: 'string' }, stops: { type: 'string' },
        'clock-rate': { type: 'string' }, 'position-every': { type: 'string' }, 'speed-kmh': { type: 'string' }, late: { type: 'string' },
        center: { type: 'string' }, 'radius-km': { type: 'string' }, seed: { type: 'string' }, route: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' },
      },
    }))
  } catch (err) {
    process.stderr.write(`${messageOf(err)}\n${USAGE}\n`)
    process.exit(2)
  }
  if (values.help) { process.stdout.write(`${USAGE}\n`); return }
  const token = values.token ?? process.env.SIM_TOKEN
  // Existing routes are read and driven with their drivers' tokens; planning a day needs the organization's.
  if (!token && !values.route?.length) { process.stderr.write(`--token (or --route ID:TOKEN) is required\n${USAGE}\n`); process.exit(2) }
  for (const spec of values.route ?? []) {
    try { parseRouteSpec(spec) } catch (err) { process.stderr.write(`${messageOf(err)}\n${USAGE}\n`); process.exit(2) }
  }
  const num = (v: string | undefined, d: number, name: string) => {
    const n = v === undefined ? d : Number(v)
    if (!Number.isFinite(n) || n < 0) { process.stderr.write(`--${name}: expected a number, got "${v}"\n`); process.exit(2) }
    return n
  }
  const [lat, lng] = (values.center ?? '-32.95,-60.65').split(',').map(Number)
  const o = {
    base: values.base ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`,
    routes: num(values.routes, 3, 'routes'), stops: num(values.stops, 10, 'stops'), rate: Math.max(1, num(values['clock-rate'], 1, 'clock-rate')),
    positionEveryMs: num(values['position-every'], 10, 'position-every') * 1000, speedKmh: num(values['speed-kmh'], 30, 'speed-kmh'),
    lateMs: num(values.late, 60, 'late') * 60_000, radiusKm: num(values['radius-km'], 5, 'radius-km'), seed: num(values.seed, 1, 'seed'),
    center: { lat: lat!, lng: lng! },
  }
  const api = new ApiClient(o.base, token)
  const clock = new ServerClock(o.rate)
  const rng = new Rng(o.seed)
  const stamp = () => new Date(clock.now()).toISOString().slice(11, 16)
  // At a terminal, a cli-progress bar of the stops done (on stderr) with the log lines above it.
  let bars: cliProgress.MultiBar | undefined
  const log = (line: string) => {
    const text = `[simulate ${stamp()}] ${line}\n`
    if (bars) bars.log(text)
    else process.stdout.write(text)
  }
  let done = 0

  const day = values.route?.length
    ? await existingRoutes(api, clock, values.route, o.center, log)
    : await planDay(api, clock, {
      routes: o.routes, stops: o.stops, center: o.center, radiusKm: o.radiusKm, startInMs: 5 * 60_000, windowHours: 2,
      durationMinutes: 5, rng, tag: randomBytes(3).toString('hex'), log,
    })
  const first = day.routes[0]
  const startAt = Math.max(day.startAt, clock.now() + 30_000)
  const holdUp = first && first.stops.length >= 3 && o.lateMs > 0 ? { ulid: first.stops[2]!.ulid, lateMs: o.lateMs } : undefined
  if (holdUp) log(`route ${first!.id}: its driver is held up at the third stop (${holdUp.ulid}) until the stops after it are ${o.lateMs / 60_000} minutes late`)
  for (const r of day.routes) log(`route ${r.id}: ${r.driverName}, ${r.stops.length} stops — GET ${o.base}/api/v1/routes/${r.id}`)
  if (process.stderr.isTTY) {
    bars = new cliProgress.MultiBar({ format: 'simulate |{bar}| {value}/{total} stops done | server clock {clock} | {duration_formatted}', hideCursor: true, stream: process.stderr }, cliProgress.Presets.shades_classic)
  }
  const bar = bars?.create(day.routes.reduce((n, r) => n + r.stops.length, 0), 0, { clock: stamp() })
  const ticker = bar ? setInterval(() => bar!.update(done, { clock: stamp() }), 1000) : undefined
  const onEvent = (e: DriverEvent) => {
    if (e.kind === 'position') return
    if (e.kind !== 'arrived') done++
    log(`route ${e.route}: stop ${e.stop} ${e.kind}`)
  }
  const outcomes = await Promise.all(day.routes.map((r, i) => driveRoute(api.as(r.driverToken), clock, r, o.center, startAt + i * 5_000, {
    speedKmh: o.speedKmh, driverSpread: 0.15, legSpread: 0.12, serviceSpread: 0.3, failRate: 0.05, positionEveryMs: o.positionEveryMs, ...(i === 0 && holdUp ? { holdUp } : {}),
  }, new Rng(o.seed * 1000 + i), onEvent)))
  if (ticker) clearInterval(ticker)
  bars?.stop()
  bars = undefined
  const all = outcomes.flat()
  log(`day done: ${all.filter((s) => !s.failed).length} stops complete, ${all.filter((s) => s.failed).length} failed`)
  log('predicted against actual arrivals: select * from read_model.task_eta_history (docs/read-models.md)')
}

main().catch((err) => {
  process.stderr.write(`simulate: ${messageOf(err)}\n`)
  process.exit(1)
})
