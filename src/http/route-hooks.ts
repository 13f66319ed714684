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
 * hooks of that kind (or, with `first`, before every hook of that kind the route has by then,
 * those other plugins appended included). A global hook runs on every request; one that only
 * concerns writes should not cost every read (the HTTP benchmark counts microseconds per request).
 */
export function hookRoutes(app: FastifyInstance, applies: (route: RouteOptions) => boolean, name: RouteHookName, hook: (...args: any[]) => void | Promise<unknown>, at: 'last' | 'first' = 'last'): void {
  const add = <H>(existing: H | H[] | undefined, h: H): H[] => {
    const hooks = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]
    return at === 'first' ? [h, ...hooks] : [...hooks, h]
  }
  app.addHook('onRoute', (route) => {
    if (!applies(route)) return
    // One assignment per kind: each kind's handlers have their own type.
    switch (name) {
      case 'onRequest': route.onRequest = add(route.onRequest, hook); break
      case 'preHandler': route.preHandler = add(route.preHandler, hook); break
      case 'onSend': route.onSend = add(route.onSend, hook); break
      case 'onResponse': route.onResponse = add(route.onResponse, hook); break
    }
  })
}
