/**
 * An error of the HTTP layer itself (a malformed multipart body, a rate limit): it is about the
 * request, not the domain, so it carries its status. Domain errors live in src/shared/errors.ts.
 */
export class HttpError extends Error {
  constructor(readonly statusCode: number, readonly code: string, message: string) {
    super(message)
  }
}
