/**
 * The database side of one HTTP request (`DatabaseHandle.requestWork`), so that nothing runs on
 * after its client gave up (issue 32): every statement the request issues on the handle's `db`
 * runs under a statement timeout, and the statements still running when its client disconnects
 * are cancelled. The request's code names none of this: the adapter finds the request's statements
 * by the async context `run` starts (whatever `fn` calls or schedules belongs to the request).
 */
export interface RequestWork {
  /** Runs `fn`, and all it starts, as this request's work. */
  run<T>(fn: () => T): T
  /**
   * The client is gone: the statements running for the request are cancelled, and any it starts
   * after this fails at once, until `finish`.
   */
  abandon(): void
  /**
   * The request is answered (or given up for good): what still runs in its context, such as a
   * shared cache load or a hub's loop it happened to start, is no longer its own and runs as
   * background work would, without the timeout and never cancelled.
   */
  finish(): void
}

export interface RequestWorkOptions {
  /** Each statement of the request is cancelled by the server after this long. */
  statementTimeoutMs: number
}

/** Where no statement can be cut (PGlite: one in-process connection): the work runs as it is. */
export const uncutWork: RequestWork = {
  run: (fn) => fn(),
  abandon() {},
  finish() {},
}
