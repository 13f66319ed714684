/**
 * Route schemas compiled on a route's first use, not at startup. Compiling every route's validators
 * (ajv) and response serializers (fast-json-stringify) took about half of a start: seconds on two
 * cores, paid again by every process (each API process, each CLI run, each test file), most of whose
 * routes a short-lived process never serves. A long-lived server compiles the rest just after it
 * listens (`compileRemaining`, from main.ts), a slice at a time, so the first request to a route
 * seldom pays. `compileAll` is what a test uses to prove every schema compiles.
 */
const pending = new Set<() => void>()

/** A compiled function's stand-in: compiles on its first call (or in `compileRemaining`), then forwards. */
export function compiledOnFirstUse<F extends (data: unknown) => unknown>(compile: () => F): F & { errors?: unknown } {
  let compiled: F | undefined
  const ensure = (): F => {
    if (!compiled) {
      pending.delete(ensure)
      compiled = compile()
    }
    return compiled
  }
  pending.add(ensure)
  // Fastify reads a validator's `errors` after calling it (ajv's convention).
  const run = ((data: unknown) => {
    const fn = ensure()
    const result = fn(data)
    run.errors = (fn as { errors?: unknown }).errors
    return result
  }) as F & { errors?: unknown }
  return run
}

/** Compiles every stand-in not yet compiled, now; rethrows the first schema that does not compile. */
export function compileAll(): number {
  let n = 0
  for (const ensure of [...pending]) { ensure(); n++ }
  return n
}

/** Compiles the rest in slices of ~10 ms between requests; resolves when none is left. */
export async function compileRemaining(): Promise<void> {
  while (pending.size) {
    const until = performance.now() + 10
    for (const ensure of pending) {
      try { ensure() } catch { /* it throws again on the route's first use, as an answer there */ }
      if (performance.now() > until) break
    }
    await new Promise((r) => setImmediate(r))
  }
}
