/** A sleep that a `kick` ends early; a kick while nobody sleeps is remembered for the next sleep. */
export class Wakeup {
  private pending = false
  private wake: (() => void) | undefined

  kick(): void {
    if (this.wake) this.wake()
    else this.pending = true
  }

  /** Resolves true when a kick ended it, false when the time ran out. */
  sleep(ms: number): Promise<boolean> {
    if (this.pending) {
      this.pending = false
      return Promise.resolve(true)
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(false), Math.max(0, ms))
      const self = this
      function done(kicked: boolean) {
        clearTimeout(timer)
        self.wake = undefined
        self.pending = false
        resolve(kicked)
      }
      this.wake = () => done(true)
    })
  }
}

export const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** True when `p` settles within `ms`; the timer does not outlive the race. */
export async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), ms) })
  try {
    return await Promise.race([p.then(() => true, () => true), timeout])
  } finally {
    clearTimeout(timer)
  }
}
