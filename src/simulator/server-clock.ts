/**
 * The server's clock as the simulator sees it: the server may run faster than real time
 * (CLOCK_RATE, development only), so a simulated day passes in minutes. The simulator is told the
 * rate and reads the offset from a time the server stamped (`received_at` of a positions batch).
 */
export class ServerClock {
  private anchorServer = Date.now()
  private anchorReal = Date.now()

  constructor(readonly rate: number) {}

  /** A time the server stamped, seen now (half a round trip late at most). */
  calibrate(serverTime: string | number): void {
    this.anchorServer = typeof serverTime === 'number' ? serverTime : Date.parse(serverTime)
    this.anchorReal = Date.now()
  }

  now(): number {
    return this.anchorServer + (Date.now() - this.anchorReal) * this.rate
  }

  /** Resolves when the server's clock reaches `at`. */
  until(at: number): Promise<void> {
    const ms = (at - this.now()) / this.rate
    return ms <= 0 ? Promise.resolve() : new Promise((r) => setTimeout(r, ms))
  }
}
