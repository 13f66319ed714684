/**
 * Domain errors: why a command or query is refused, in the domain's words, with a stable `code`.
 * They know nothing of HTTP (deciders throw them, Emmett's `IllegalStateError` style); the error
 * plugin (src/http/plugins/errors.ts) is the one place that maps them to a status and renders
 * them: 422 as `{message, errors}`, anything else as `{message, code}` (DESIGN §3.2).
 */
export abstract class DomainError extends Error {
  constructor(readonly code: string, message: string) {
    super(message)
  }
}

export type FieldErrors = Record<string, string[]>

/** The input breaks a rule; `errors` names every failing field by dot path. */
export class ValidationError extends DomainError {
  constructor(readonly errors: FieldErrors, message = 'The given data was invalid.') {
    super('validation_failed', message)
  }

  static field(path: string, message: string): ValidationError {
    return new ValidationError({ [path]: [message] })
  }
}

/** Unknown, or not the caller's to see: other tenants never learn that a record exists. */
export class NotFoundError extends DomainError {
  constructor(what = 'Resource') { super('not_found', `${what} not found.`) }
}

/** Known caller, but this action is not theirs to take. */
export class ForbiddenError extends DomainError {
  constructor(message = 'This action is not allowed.', code = 'forbidden') { super(code, message) }
}

/** No valid credentials. */
export class UnauthorizedError extends DomainError {
  constructor(message = 'Unauthenticated.') { super('unauthenticated', message) }
}

/** The command is not allowed in the current state (already exists, cancelled, final, …). */
export class IllegalStateError extends DomainError {
  constructor(message: string, code = 'illegal_state') { super(code, message) }
}

/** Collects field errors so every failing field is reported at once, not just the first. */
export class ErrorBag {
  // Null prototype: paths come from request keys, and `constructor` must not find an inherited member.
  readonly errors: FieldErrors = Object.create(null)
  add(path: string, message: string): void {
    (this.errors[path] ??= []).push(message)
  }
  merge(prefix: string, other: FieldErrors): void {
    for (const [k, msgs] of Object.entries(other)) for (const m of msgs) this.add(prefix ? `${prefix}.${k}` : k, m)
  }
  get empty(): boolean { return Object.keys(this.errors).length === 0 }
  throwIfAny(): void { if (!this.empty) throw new ValidationError(this.errors) }
}
