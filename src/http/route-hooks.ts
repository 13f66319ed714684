import type { FastifyInstance, RouteOptions } from 'fastify'

type RouteHookName = 'onRequest' | 'preHandler' | 'onSend' | 'onResponse'

const methodsOf = (route: RouteOptions): string[] => (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toUpperCase())

export const isWriteRoute = (route: RouteOptions) => methodsOf(route).some((m) => m !== 'GET' && m !== 'HEAD' && m !== 'OPTIONS')
export const isPostRoute = (route: RouteOptions) => methodsOf(route).includes('POST')
/** Routes that declare they take multipart bodies (`schema.consumes`): the only ones that need @fastify/multipart's hooks. */
export const takesMultipart = (route: RouteOptions) =>
  ((route.schema as { consumes?: readonly string[] } | undefined)?.consumes ?? []).some((c) => c.startsWith('multipart/'))

/**
 * Adds `hook` to the routes registered after this call for which `applies` holds, after their own
 * hooks of that kind. A global hook runs on every request; one that only concerns writes should not
 * cost every read (the HTTP benchmark counts microseconds per request).
 */
export function hookRoutes(app: FastifyInstance, applies: (route: RouteOptions) => boolean, name: RouteHookName, hook: (...args: any[]) => unknown): void {
  app.addHook('onRoute', (route) => {
    if (!applies(route)) return
    const existing = route[name] as unknown
    ;(route as any)[name] = existing === undefined ? [hook] : Array.isArray(existing) ? [...existing, hook] : [existing, hook]
  })
}
