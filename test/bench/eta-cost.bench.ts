// Cost growth of ETA recomputation (issue 23): what one position costs the ETA engine's model
// (src/etas/eta-model.ts: applyPositions, then drain: computeEtas over the route, delay watch,
// history rows and task.eta frames for what moved) on a started route of 25 stops and of 300 stops,
// in process, no storage (the round's one transaction is measured end to end by eta-freshness).
// Two cases each: a position where the plan expects the van (nothing moves by a minute: computed,
// nothing restated) and a position that moves every ETA by minutes (every open task restated: a
// history row and a frame each). Baseline in the same run: the 25-stop route; linear growth would
// make the 300-stop route 12× as dear. Also computeEtas alone (the method, no bookkeeping).
// Run: bash test/bench/run-all.sh eta-cost (or npx tsx test/bench/eta-cost.bench.ts). BENCH_POSITIONS=2000.
import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { EtaModel } from '../../src/etas/eta-model.js'
import { computeEtas, type Stop } from '../../src/etas/eta-method.js'
import { percentile } from './bench-database.js'

const POSITIONS = Number(process.env['BENCH_POSITIONS'] ?? 2000)
const MIN = 60_000
const T0 = Date.parse('2026-11-27T09:00:00Z')
const origin = { lat: -32.95, lng: -60.65 }
const settings = { speedKmh: 30, delayThresholdMs: 10 * MIN }
/** Stop i of n on a loop of some 5 km radius around the depot. */
const pointOf = (i: number, n: number) => ({ lat: origin.lat + 0.045 * Math.sin((2 * Math.PI * i) / n), lng: origin.lng + 0.05 * Math.cos((2 * Math.PI * i) / n) })

let position = 0
const ev = (streamId: string, type: string, data: Record<string, unknown>, at: number): RecordedEvent => ({
  id: `e${++position}`, streamId, streamVersion: 1, position: String(position), type, data,
  metadata: { actor: { kind: 'system', id: 'bench' }, occurred_at: new Date(at).toISOString() }, schemaVersion: 1, recordedAt: new Date(at),
})
const iso = (ms: number) => new Date(ms).toISOString()

/** A model holding one started route of `n` stops, each with a two-hour window, its driver `usr_d`. */
function modelWith(n: number): EtaModel {
  const m = new EtaModel(settings)
  const ulids = Array.from({ length: n }, (_, i) => `T${n}_${String(i).padStart(4, '0')}`)
  const events: RecordedEvent[] = ulids.map((ulid, i) => {
    const p = pointOf(i, n)
    const from = T0 + Math.floor(i / 4) * 30 * MIN
    return ev(`task-${ulid}`, 'TaskCreated', {
      ulid, organization_id: 'org_a', address: { geo_latitude: p.lat, geo_longitude: p.lng, geo_precision: 'exact' },
      time_windows: [{ from: iso(from), to: iso(from + 120 * MIN) }], duration_minutes: 5,
    }, T0 - 60 * MIN)
  })
  const id = n
  events.push(
    ev(`route-${id}`, 'RouteCreated', { route_id: id, organization_id: 'org_a', driver_id: 'usr_d', start_address: { geo_latitude: origin.lat, geo_longitude: origin.lng, geo_precision: 'exact' }, created_at: iso(T0) }, T0 - 30 * MIN),
    ev(`route-${id}`, 'RouteTasksAdded', { route_id: id, organization_id: 'org_a', index: 0, tasks: ulids.map((ulid) => ({ ulid, status: 'pending' })), added_at: iso(T0) }, T0 - 30 * MIN),
    ev(`route-${id}`, 'RoutePublished', { route_id: id, organization_id: 'org_a', driver_id: 'usr_d', published_at: iso(T0) }, T0 - 20 * MIN),
    ev(`route-${id}`, 'RouteStarted', { route_id: id, organization_id: 'org_a', started_at: iso(T0) }, T0),
  )
  m.applyEvents(events)
  m.drain()
  return m
}

interface Figures { p50: number; p99: number; mean: number; restated: number }

/** `POSITIONS` positions, each applied and drained; `far` alternates the van between two points minutes apart. */
function measure(n: number, far: boolean): Figures {
  const m = modelWith(n)
  const times: number[] = []
  let restated = 0
  const a = { lat: origin.lat + 0.001, lng: origin.lng }
  const b = { lat: origin.lat + 0.03, lng: origin.lng }
  for (let i = 0; i < POSITIONS + 200; i++) {
    const at = T0 + MIN + i * 5_000
    // Near: the van waits at a door (a few metres of GPS jitter; the ETAs drift 5 s a position and
    // are restated once in a dozen); far: it jumps 3 km back and forth (every ETA moves minutes).
    const point = far ? (i % 2 === 0 ? a : b) : { lat: a.lat + (i % 3) * 0.00002, lng: a.lng }
    const t0 = performance.now()
    m.applyPositions('usr_d', { point, recordedAt: at }, at)
    const out = m.drain()
    const took = performance.now() - t0
    if (i >= 200) { times.push(took); restated += out.history.length }
  }
  times.sort((x, y) => x - y)
  return { p50: percentile(times, 50), p99: percentile(times, 99), mean: times.reduce((s, x) => s + x, 0) / times.length, restated: restated / POSITIONS }
}

function methodOnly(n: number): number {
  const stops: Stop[] = Array.from({ length: n }, (_, i) => ({
    ulid: `S${i}`, status: 'pending', point: pointOf(i, n), windows: [{ from: T0 + Math.floor(i / 4) * 30 * MIN, to: T0 + Math.floor(i / 4) * 30 * MIN + 120 * MIN }], serviceMs: 5 * MIN, arrivedAt: null, finalAt: null,
  }))
  const times: number[] = []
  for (let i = 0; i < POSITIONS + 200; i++) {
    const at = T0 + MIN + i * 5_000
    const t0 = performance.now()
    computeEtas({ stops, start: origin, startedAt: T0, position: { point: origin, recordedAt: at } }, at, 30)
    if (i >= 200) times.push(performance.now() - t0)
  }
  times.sort((x, y) => x - y)
  return percentile(times, 50)
}

const us = (ms: number) => `${(ms * 1000).toFixed(1).padStart(8)} µs`

console.log(`ETA recomputation per position, in process (EtaModel.applyPositions + drain), ${POSITIONS} positions per case after 200 warm-up`)
console.log('stops | case                       |      p50    |      p99    |     mean    | restated/position')
const rows: Record<string, Figures> = {}
for (const n of [25, 300]) {
  for (const far of [false, true]) {
    const f = measure(n, far)
    rows[`${n}-${far}`] = f
    console.log(`${String(n).padStart(5)} | ${(far ? 'every ETA moves (restated)' : 'small moves (van waits)').padEnd(26)} | ${us(f.p50)} | ${us(f.p99)} | ${us(f.mean)} | ${f.restated.toFixed(1)}`)
  }
}
const m25 = methodOnly(25)
const m300 = methodOnly(300)
console.log(`computeEtas alone, p50: 25 stops ${us(m25)}, 300 stops ${us(m300)} (×${(m300 / m25).toFixed(1)})`)
for (const far of [false, true]) {
  const r = rows[`300-${far}`]!.mean / rows[`25-${far}`]!.mean
  console.log(`300 stops vs 25 (baseline), ${far ? 'every ETA restated' : 'small moves'}: ×${r.toFixed(1)} the time (linear: ×12)`)
}
