import type { FastifyRequest } from 'fastify'

/**
 * The one place absolute URLs the server hands out are built (DESIGN §3.10): live links, tracking
 * links, pagination links, the OpenAPI document's server. `PUBLIC_BASE_URL` when set; otherwise the
 * request's own scheme and host, where fastify's `trustProxy` (the `TRUST_PROXY` setting) decides
 * whether `X-Forwarded-Proto`/`X-Forwarded-Host` count: only from the proxies it names.
 *
 * `path` starts with `/` (it may carry a query string); the result has no doubled slash.
 */
export function publicUrl(request: FastifyRequest, path: string): string {
  return `${publicOrigin(request)}${path.startsWith('/') ? path : `/${path}`}`
}

/** The base every public URL starts with (no trailing slash). */
export function publicOrigin(request: FastifyRequest): string {
  const configured = request.server.publicBaseUrl
  if (configured) return configured
  // request.host is X-Forwarded-Host only from a trusted proxy (else Host); likewise request.protocol.
  return `${request.protocol}://${request.host || 'localhost'}`
}

declare module 'fastify' {
  interface FastifyInstance {
    /** `PUBLIC_BASE_URL` (buildApp decorates the root with it): read through publicUrl. */
    publicBaseUrl: string | undefined
  }
}
