/** SQLSTATE `query_canceled`: a statement timeout, or a cancel request (ours when the client left). */
export const QUERY_CANCELED = '57014'

/** A statement refused before it started: its request's client had already gone (request-work.ts). */
export class RequestAbandonedError extends Error {
  readonly code = 'request_abandoned'
  constructor() {
    super('the client of this request is gone: no further statement is started for it')
    this.name = 'RequestAbandonedError'
  }
}

/** A statement the server cancelled (from pg). */
export const isCancelledStatement = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && 'code' in err && err.code === QUERY_CANCELED
  && 'severity' in err && typeof err.severity === 'string'
