/**
 * Errors that carry their HTTP answer. Deciders throw them ("then this error"); the error plugin
 * renders them: 422 as `{message, errors}`, anything else as `{message, code}` (DESIGN §3.2).
 */
export class AppError extends Error {
  constructor(readonly statusCode: number, readonly code: string, message: string) {
    super(message)
  }
}

export type FieldErrors = Record<string, string[]>

export class ValidationError extends AppError {
  constructor(readonly errors: FieldErrors, message = 'The given data was invalid.') {
    super(422, 'validation_failed', message)
  }

  static field(path: string, message: string): ValidationError {
    return new ValidationError({ [path]: [message] })
  }
}

export class NotFoundError extends AppError {
  constructor(what = 'Resource') { super(404, 'not_found', `${what} not found.`) }
}

export class ForbiddenError extends AppError {
  constructor(message = 'This action is not allowed.', code = 'forbidden') { super(403, code, message) }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'Unauthenticated.') { super(401, 'unauthenticated', message) }
}

export class ConflictError extends AppError {
  constructor(message: string, code = 'conflict') { super(409, code, message) }
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
