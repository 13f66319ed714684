import type { FastifyInstance, RouteOptions } from 'fastify'

type RouteHookName = 'onRequest' | 'preHandler' | 'onSend' | 'onResponse'

const methodsOf = (route: RouteOptions): string[] => (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toUpperCase())

export const isWriteRoute = (route: RouteOptions) => methodsOf(route).some((m) => m !== 'GET' && m !== 'HEAD' && m !== 'OPTIONS')
export const isPostRoute = (route: RouteOptions) => methodsOf(route).includes('POST')
/** Routes that declare they take multipart bodies (`schema.consumes`): the only ones that need @fastify/multipart's hooks. */
export const takesMultipart = (route: RouteOptions) =>
  (route.schema?.consumes ?? []).some((c) => c.startsWith('multipart/'))

/**
 * Adds `hook` to the routes registered after this call for which `applies` holds, after their own
 * hooks of that kind. A global hook runs on every request; one that only concerns writes should not
 * cost every read (the HTTP benchmark counts microseconds per request).
 */
export function hookRoutes(app: FastifyInstance, applies: (route: RouteOptions) => boolean, name: RouteHookName, hook: (...args: any[]) => void | Promise<unknown>): void {
  app.addHook('onRoute', (route) => {
    if (!applies(route)) return
    // One assignment per kind: each kind's handlers have their own type.
    switch (name) {
      case 'onRequest': route.onRequest = withHook(route.onRequest, hook); break
      case 'preHandler': route.preHandler = withHook(route.preHandler, hook); break
      case 'onSend': route.onSend = withHook(route.onSend, hook); break
      case 'onResponse': route.onResponse = withHook(route.onResponse, hook); break
    }
  })
}

/** A route's own hooks of one kind (none, one, or a list), then `hook`. */
function withHook<H>(existing: H | H[] | undefined, hook: H): H[] {
  if (existing === undefined) return [hook]
  return Array.isArray(existing) ? [...existing, hook] : [existing, hook]
}
