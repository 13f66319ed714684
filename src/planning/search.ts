// Slack induction by string removals (Christiaens & Vanden Berghe, 2020): ruin a few strings of
// neighbouring stops across routes, recreate by cheapest insertion with "blinks", accept by
// simulated annealing. Unserved requests cost far more than any travel, so the search first serves
// as many as it can and then shortens the travel.
import type { Instance } from './instance.js'
import { Random } from './random.js'
import { RouteState, startTime } from './routes.js'

export interface SearchOptions {
  seconds: number
  iterations: number
  seed: number
}

export interface SearchResult {
  /** Tasks per vehicle, in visit order. */
  routes: number[][]
  unassigned: number[]
  iterations: number
}

const AVG_REMOVED = 10
const MAX_STRING = 10
const SPLIT_BETA = 0.01
const BLINK = 0.01
const NEIGHBOURS = 100

interface Insertion { route: number; p1: number; p2: number; delta: number }

export class Search {
  private readonly rng: Random
  private readonly routes: RouteState[]
  private readonly routeOf: Int32Array
  private readonly posOf: Int32Array
  private readonly adjacency: Int32Array[]
  private readonly penalty: number
  private unassigned: number[] = []
  // per-iteration undo: the requests unserved before the move, the routes it touched and their
  // sequences before it, and whether it left a route infeasible
  private savedUnassigned: number[] = []
  private broken = false
  private readonly touched: Uint8Array
  private readonly touchedList: number[] = []
  private readonly backup: Int32Array[]
  private readonly backupN: Int32Array
  private readonly ruined: Uint8Array
  private readonly removed: Uint8Array
  private readonly scratch: Int32Array
  private readonly born = performance.now()

  constructor(private readonly inst: Instance, private readonly options: SearchOptions) {
    this.rng = new Random(options.seed)
    this.routes = Array.from({ length: inst.nVehicles }, (_, v) => new RouteState(inst, v))
    this.routeOf = new Int32Array(inst.nTasks).fill(-1)
    this.posOf = new Int32Array(inst.nTasks)
    this.touched = new Uint8Array(inst.nVehicles)
    this.ruined = new Uint8Array(inst.nVehicles)
    this.removed = new Uint8Array(inst.nTasks)
    this.backup = Array.from({ length: inst.nVehicles }, () => new Int32Array(inst.nTasks))
    this.backupN = new Int32Array(inst.nVehicles)
    this.scratch = new Int32Array(inst.nTasks)
    this.adjacency = this.neighbours()
    let maxTravel = 0
    for (let i = 0; i < inst.cost.length; i++) if (inst.cost[i]! > maxTravel) maxTravel = inst.cost[i]!
    // one more served request must outweigh any saving in travel
    this.penalty = 2 * (inst.nTasks + inst.nVehicles + 1) * (maxTravel + 1)
  }

  /** Each task's nearest tasks (there and back), nearest first: where the ruin spreads. */
  private neighbours(): Int32Array[] {
    const inst = this.inst
    const size = inst.nLoc
    const n = inst.nTasks
    const k = Math.max(0, Math.min(NEIGHBOURS, n - 1))
    const key = new Float64Array(n)
    const order = new Int32Array(n)
    const sorted = new Float64Array(n)
    const out: Int32Array[] = []
    for (let a = 0; a < n; a++) {
      const la = inst.loc[a]!
      for (let b = 0; b < n; b++) {
        const lb = inst.loc[b]!
        key[b] = b === a ? Infinity : inst.cost[la * size + lb]! + inst.cost[lb * size + la]!
      }
      if (k === 0) { out.push(new Int32Array(0)); continue }
      // the k-th smallest key by a native numeric sort, then only the few under it sorted by index
      sorted.set(key)
      sorted.sort()
      const threshold = sorted[k - 1]!
      let m = 0
      for (let b = 0; b < n; b++) if (key[b]! <= threshold) order[m++] = b
      const near = order.slice(0, m).sort((x, y) => key[x]! - key[y]! || x - y)
      out.push(near.slice(0, k))
    }
    return out
  }

  private totalCost(): number {
    let c = 0
    for (const r of this.routes) c += r.cost
    let missing = 0
    for (const req of this.unassigned) missing += this.inst.requestSecond[req]! >= 0 ? 2 : 1
    return c + this.penalty * missing
  }

  private index(r: number): void {
    const route = this.routes[r]!
    for (let k = 0; k < route.n; k++) {
      const t = route.seq[k]!
      this.routeOf[t] = r
      this.posOf[t] = k
    }
  }

  private touch(r: number): void {
    if (this.touched[r]) return
    this.touched[r] = 1
    this.touchedList.push(r)
    const route = this.routes[r]!
    this.backup[r]!.set(route.seq.subarray(0, route.n))
    this.backupN[r] = route.n
  }

  run(): SearchResult {
    const inst = this.inst
    const all = Array.from({ length: inst.nRequests }, (_, i) => i)
    this.unassigned = []
    this.recreate(all)
    this.touchedList.forEach((r) => { this.touched[r] = 0 })
    this.touchedList.length = 0
    this.savedUnassigned = [...this.unassigned]

    let current = this.totalCost()
    let best = current
    let bestRoutes = this.snapshot()
    let bestUnassigned = [...this.unassigned]

    const t0 = 100 * inst.meanTravel / 40
    const tf = 1 * inst.meanTravel / 40
    // the neighbour lists and the first construction count against the limit too
    const started = this.born
    const limitMs = this.options.seconds * 1000
    const maxIter = this.options.iterations
    let it = 0
    if (inst.nRequests > 0) {
      for (; it < maxIter; it++) {
        let progress: number
        if (Number.isFinite(maxIter)) {
          progress = it / maxIter
          if (Number.isFinite(limitMs) && (it & 63) === 0 && performance.now() - started >= limitMs) break
        } else {
          const elapsed = performance.now() - started
          if (elapsed >= limitMs) break
          progress = elapsed / limitMs
        }
        const temperature = t0 * Math.pow(tf / t0, progress)
        this.broken = false
        const pending = this.ruin()
        for (const r of pending) this.unassigned.push(r)
        const retry = this.unassigned
        this.unassigned = []
        this.recreate(retry)
        const cost = this.totalCost()
        if (!this.broken && cost < current - temperature * Math.log(this.rng.next())) {
          current = cost
          if (cost < best - 1e-9) {
            best = cost
            bestRoutes = this.snapshot()
            bestUnassigned = [...this.unassigned]
          }
        } else {
          this.undo()
        }
        this.savedUnassigned = [...this.unassigned]
        for (const r of this.touchedList) this.touched[r] = 0
        this.touchedList.length = 0
      }
    }
    return { routes: bestRoutes, unassigned: bestUnassigned.flatMap((r) => this.tasksOf(r)), iterations: it }
  }

  private tasksOf(req: number): number[] {
    const second = this.inst.requestSecond[req]!
    return second >= 0 ? [this.inst.requestFirst[req]!, second] : [this.inst.requestFirst[req]!]
  }

  private snapshot(): number[][] {
    return this.routes.map((r) => Array.from(r.seq.subarray(0, r.n)))
  }

  /** Puts back the routes the rejected move touched; requests unserved before it stay unserved. */
  private undo(): void {
    for (const r of this.touchedList) {
      this.routes[r]!.setTasks(this.backup[r]!, this.backupN[r]!)
      this.index(r)
    }
    this.unassigned = [...this.savedUnassigned]
    for (const req of this.unassigned) for (const t of this.tasksOf(req)) this.routeOf[t] = -1
  }

  /** Removes strings of stops near a random seed stop; returns the removed requests. */
  private ruin(): number[] {
    const inst = this.inst
    const rng = this.rng
    let served = 0
    let used = 0
    for (const r of this.routes) if (r.n > 0) { served += r.n; used++ }
    if (served === 0) return []
    const avgSize = served / used
    const lsMax = Math.min(MAX_STRING, avgSize)
    const ksMax = (4 * AVG_REMOVED) / (1 + lsMax) - 1
    const ks = Math.floor(rng.next() * ksMax) + 1

    let seed = rng.int(inst.nTasks)
    for (let tries = 0; this.routeOf[seed]! < 0 && tries < inst.nTasks; tries++) seed = (seed + 1) % inst.nTasks
    const removedReqs: number[] = []
    const ruinedList: number[] = []
    const adj = this.adjacency[seed]!
    for (let i = -1; i < adj.length && ruinedList.length < ks; i++) {
      const c = i < 0 ? seed : adj[i]!
      const r = this.routeOf[c]!
      if (r < 0 || this.ruined[r] || this.removed[c]) continue
      const route = this.routes[r]!
      const lMax = Math.min(route.n, lsMax)
      const l = Math.floor(rng.next() * lMax) + 1
      const pos = this.posOf[c]!
      this.ruined[r] = 1
      ruinedList.push(r)
      this.touch(r)
      if (rng.next() < 0.5 || l === route.n) {
        this.removeString(route, pos, l, 0, removedReqs)
      } else {
        let m = 1
        while (l + m < route.n && rng.next() >= SPLIT_BETA) m++
        this.removeString(route, pos, l, m, removedReqs)
      }
    }
    for (const r of ruinedList) {
      this.ruined[r] = 0
      this.compact(r)
    }
    for (const req of removedReqs) for (const t of this.tasksOf(req)) this.removed[t] = 0
    return removedReqs
  }

  /** Marks for removal `l` stops of a string of `l + m` containing position `pos` (keeping `m` in a row inside). */
  private removeString(route: RouteState, pos: number, l: number, m: number, out: number[]): void {
    const len = l + m
    const lo = Math.max(0, pos - len + 1)
    const hi = Math.min(pos, route.n - len)
    const start = lo + this.rng.int(hi - lo + 1)
    const keepAt = m > 0 ? start + this.rng.int(l + 1) : -1
    for (let p = start; p < start + len; p++) {
      if (keepAt >= 0 && p >= keepAt && p < keepAt + m) continue
      const t = route.seq[p]!
      if (this.removed[t]) continue
      const req = this.inst.requestOf[t]!
      // a shipment's two stops are always on one route: compacting it drops both
      for (const x of this.tasksOf(req)) this.removed[x] = 1
      out.push(req)
    }
  }

  /** Drops the removed tasks from route r (and a partner's route) and refreshes it. */
  private compact(r: number): void {
    const route = this.routes[r]!
    let n = 0
    for (let k = 0; k < route.n; k++) {
      const t = route.seq[k]!
      if (this.removed[t]) this.routeOf[t] = -1
      else this.scratch[n++] = t
    }
    // a matrix that breaks the triangle inequality (rounded seconds) can make a route late by
    // taking a stop out of it: such a move is rejected
    if (!route.setTasks(this.scratch, n)) this.broken = true
    this.index(r)
  }

  private recreate(requests: number[]): void {
    const inst = this.inst
    const rng = this.rng
    const order = requests.slice()
    const pick = rng.next() * 11
    // shuffle first so that ties in the sorts below fall differently each time
    for (let i = order.length - 1; i > 0; i--) {
      const j = rng.int(i + 1)
      const x = order[i]!
      order[i] = order[j]!
      order[j] = x
    }
    if (pick >= 4 && pick < 8) {
      const size = (req: number) => {
        let s = 0
        for (const t of this.tasksOf(req)) for (let d = 0; d < inst.dims; d++) s += inst.initLoad[t * inst.dims + d]! + Math.abs(inst.change[t * inst.dims + d]!)
        return s
      }
      order.sort((a, b) => size(b) - size(a))
    } else if (pick >= 8) {
      const depot = inst.vStart[0]!
      const far = (req: number) => inst.cost[depot * inst.nLoc + inst.loc[inst.requestFirst[req]!]!]!
      if (pick < 10) order.sort((a, b) => far(b) - far(a))
      else order.sort((a, b) => far(a) - far(b))
    }
    const best: Insertion = { route: -1, p1: 0, p2: 0, delta: 0 }
    for (const req of order) {
      best.route = -1
      best.delta = Infinity
      const second = inst.requestSecond[req]!
      const first = inst.requestFirst[req]!
      const triedClass = new Set<number>()
      for (let r = 0; r < this.routes.length; r++) {
        const route = this.routes[r]!
        if (route.n === 0) {
          const cls = inst.vClass[r]!
          if (triedClass.has(cls)) continue
          triedClass.add(cls)
        }
        if (second < 0) this.bestSingle(route, first, best)
        else this.bestPair(route, first, second, best)
      }
      if (best.route < 0) {
        this.unassigned.push(req)
        continue
      }
      const route = this.routes[best.route]!
      this.touch(best.route)
      const n = route.n
      let w = 0
      for (let k = 0; k <= n; k++) {
        if (k > 0) this.scratch[w++] = route.seq[k - 1]!
        if (k === best.p1) this.scratch[w++] = first
        if (second >= 0 && k === best.p2) this.scratch[w++] = second
      }
      if (!route.setTasks(this.scratch, w)) this.broken = true
      this.index(best.route)
    }
  }

  /** Cheapest feasible position for one stop, between positions k and k+1 (k = 0..n). */
  private bestSingle(route: RouteState, task: number, best: Insertion): void {
    const inst = this.inst
    const size = inst.nLoc
    const dims = inst.dims
    const v = route.vehicle
    const lu = inst.loc[task]!
    const su = inst.svc[task]!
    const single = inst.twCount[task] === 1
    const w0 = inst.twStart[task]!
    const eu = inst.twE[w0]!
    const lateU = inst.twL[w0]!
    const { locs, svcs, early, late, prefMax, sufMax } = route
    const n = route.n
    for (let k = 0; k <= n; k++) {
      const lk = locs[k]!
      const lnext = locs[k + 1]!
      const dIn = inst.dur[lk * size + lu]!
      const a = early[k]! + svcs[k]! + dIn
      let s: number
      if (single) {
        if (a > lateU) continue
        s = a < eu ? eu : a
      } else {
        s = startTime(inst, task, a)
        if (s === Infinity) continue
      }
      const dOut = inst.dur[lu * size + lnext]!
      if (s + su + dOut > late[k + 1]!) continue
      const cost = inst.cost
      const delta = cost === inst.dur
        ? dIn + dOut - cost[lk * size + lnext]!
        : cost[lk * size + lu]! + cost[lu * size + lnext]! - cost[lk * size + lnext]!
      if (delta >= best.delta) continue
      let fits = true
      for (let d = 0; d < dims; d++) {
        const c = inst.cap[v * dims + d]!
        const a0 = inst.initLoad[task * dims + d]!
        if (prefMax[k * dims + d]! + a0 > c || sufMax[k * dims + d]! + a0 + inst.change[task * dims + d]! > c) { fits = false; break }
      }
      if (!fits) continue
      if (this.rng.next() < BLINK) continue
      best.route = v
      best.p1 = k
      best.p2 = k
      best.delta = delta
    }
  }

  /** Cheapest feasible positions for a pickup after position p1 and its delivery after p2 ≥ p1. */
  private bestPair(route: RouteState, pu: number, de: number, best: Insertion): void {
    const inst = this.inst
    const size = inst.nLoc
    const dims = inst.dims
    const v = route.vehicle
    const lp = inst.loc[pu]!
    const ld = inst.loc[de]!
    const { locs, svcs, early, late, load, seq } = route
    const n = route.n
    const runMax = new Float64Array(dims)
    for (let p1 = 0; p1 <= n; p1++) {
      const lk = locs[p1]!
      const dIn = inst.dur[lk * size + lp]!
      const sP = startTime(inst, pu, early[p1]! + svcs[p1]! + dIn)
      if (sP === Infinity) continue
      // pickup alone must already fit before the next stop's latest start
      if (sP + inst.svc[pu]! + inst.dur[lp * size + locs[p1 + 1]!]! > late[p1 + 1]!) continue
      const cost = inst.cost
      const deltaP = cost[lk * size + lp]! + cost[lp * size + locs[p1 + 1]!]! - cost[lk * size + locs[p1 + 1]!]!
      runMax.fill(-Infinity)
      let prevLoc = lp
      let depart = sP + inst.svc[pu]!
      for (let p2 = p1; p2 <= n; p2++) {
        if (p2 > p1) {
          // stop p2 of the route now comes after the pickup: its time shifts
          const s = startTime(inst, seq[p2 - 1]!, depart + inst.dur[prevLoc * size + locs[p2]!]!)
          if (s === Infinity) break
          depart = s + svcs[p2]!
          prevLoc = locs[p2]!
        }
        let fits = true
        for (let d = 0; d < dims; d++) {
          const x = load[p2 * dims + d]!
          if (x > runMax[d]!) runMax[d] = x
          if (runMax[d]! + inst.change[pu * dims + d]! > inst.cap[v * dims + d]!) fits = false
        }
        if (!fits) break
        const dInD = inst.dur[prevLoc * size + ld]!
        const sD = startTime(inst, de, depart + dInD)
        if (sD === Infinity) continue
        const lnext = locs[p2 + 1]!
        const dOutD = inst.dur[ld * size + lnext]!
        if (sD + inst.svc[de]! + dOutD > late[p2 + 1]!) continue
        const delta = p2 === p1
          ? cost[lk * size + lp]! + cost[lp * size + ld]! + cost[ld * size + lnext]! - cost[lk * size + lnext]!
          : deltaP + cost[locs[p2]! * size + ld]! + cost[ld * size + lnext]! - cost[locs[p2]! * size + lnext]!
        if (delta >= best.delta) continue
        if (this.rng.next() < BLINK) continue
        best.route = v
        best.p1 = p1
        best.p2 = p2
        best.delta = delta
      }
    }
  }
}

export function search(inst: Instance, options: SearchOptions): SearchResult {
  return new Search(inst, options).run()
}
