/** A seeded generator (mulberry32), so that a simulated day can be run again the same. */
export class Rng {
  private s: number
  constructor(seed: number) { this.s = seed >>> 0 }

  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0)
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  /** A standard normal draw (Box–Muller). */
  normal(): number {
    const u = Math.max(this.next(), 1e-12)
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next())
  }

  /** A factor around 1 whose logarithm has standard deviation `sigma`. */
  factor(sigma: number): number {
    return Math.exp(sigma * this.normal())
  }
}
