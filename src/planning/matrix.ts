// Travel matrices: Euclidean for the benchmark instances, haversine at a fixed speed for real
// addresses (no road network offline; DESIGN §3.9 sets ROUTING_SPEED_KMH, default 30).

export interface Point { x: number; y: number }
export interface LatLng { lat: number; lng: number }

/** Euclidean distances, not rounded (Solomon's convention: travel time equals distance). */
export function euclideanMatrix(points: readonly Point[]): Float64Array[] {
  return points.map((a) => {
    const row = new Float64Array(points.length)
    points.forEach((b, j) => { row[j] = Math.hypot(a.x - b.x, a.y - b.y) })
    return row
  })
}

const EARTH_RADIUS_M = 6_371_008.8

export function haversineMeters(a: LatLng, b: LatLng): number {
  const rad = Math.PI / 180
  const dLat = (b.lat - a.lat) * rad
  const dLng = (b.lng - a.lng) * rad
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLng / 2) ** 2
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)))
}

/** Distances in metres and travel times in whole seconds at `speedKmh`. */
export function haversineMatrix(points: readonly LatLng[], speedKmh = 30): { distances: Float64Array[]; durations: Float64Array[] } {
  if (!(speedKmh > 0)) throw new RangeError(`speedKmh must be positive, got ${speedKmh}`)
  const metresPerSecond = speedKmh / 3.6
  const n = points.length
  const distances = points.map(() => new Float64Array(n))
  const durations = points.map(() => new Float64Array(n))
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const m = Math.round(haversineMeters(points[i]!, points[j]!))
      const s = Math.round(m / metresPerSecond)
      distances[i]![j] = m
      distances[j]![i] = m
      durations[i]![j] = s
      durations[j]![i] = s
    }
  }
  return { distances, durations }
}
