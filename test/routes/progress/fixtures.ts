import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestApp } from '../../helpers/build.js'
import { tasksWorld } from '../../tasks/fixtures.js'
import type { FastifyInstance } from 'fastify'
import type { EventStore } from '../../../src/infrastructure/event-store/event-store.js'
import type { ProjectionRunner } from '../../../projections/runner.js'

let nextRouteId = 1000 + Math.floor(Math.random() * 1000) * 1000

const meta = () => ({ actor: { kind: 'system' as const, id: 'test' }, occurred_at: new Date().toISOString() })

/**
 * Route histories written straight to the event store with the event contract of
 * schemas/events/routes.ts (given-events style: each case sets up exactly the history it needs);
 * tasks are made through POST /tasks and moved through their real endpoints. That the routes
 * module writes this contract is checked end to end in routes-api-e2e.test.ts.
 */
export async function progressWorld(h: TestApp) {
  const w = await tasksWorld(h)
  const store: EventStore = h.platform.store
  const runner: ProjectionRunner = h.platform.projections
  const settle = async (position: string) => { if (!(await runner.waitFor(position, 10_000))) throw new Error('projection did not catch up') }

  const route = async (opts: { organizationId?: string; driverId?: string | null; tasks?: string[]; publish?: boolean } = {}) => {
    const id = ++nextRouteId
    const organization_id = opts.organizationId ?? w.carrier.id
    const now = new Date().toISOString()
    const driver_id = opts.driverId === undefined ? w.driver.id : opts.driverId
    let r = await store.append(`route-${id}`, [{
      type: 'RouteCreated', metadata: meta(),
      data: { route_id: id, organization_id, name: `Route ${id}`, shift_date: '2026-11-26', driver_id, vehicle_id: null, capacity: { grams: null, volume_cm3: null, packages: null }, start_address: null, end_address: null, created_at: now },
    }], 'no_stream')
    await settle(r.position)
    if (opts.tasks?.length) await addTasks(id, opts.tasks, 0, organization_id)
    if (opts.publish) await routeEvent(id, 'RoutePublished', { driver_id: driver_id ?? w.driver.id, published_at: now }, organization_id)
    return id
  }

  const routeEvent = async (id: number, type: string, data: Record<string, unknown>, organization_id = w.carrier.id) => {
    const r = await store.append(`route-${id}`, [{ type, metadata: meta(), data: { route_id: id, organization_id, ...data } }], 'any')
    await settle(r.position)
  }

  /** RouteTasksAdded and each task's TaskRouted in one atomic write, as the routes module does. */
  const addTasks = async (id: number, ulids: string[], index: number, organization_id = w.carrier.id) => {
    const now = new Date().toISOString()
    const results = await store.appendMany([
      { streamId: `route-${id}`, expected: 'any', events: [{ type: 'RouteTasksAdded', metadata: meta(), data: { route_id: id, organization_id, index, added_at: now, tasks: ulids.map((ulid) => ({ ulid, type: 'delivery', load: { grams: 0, volume_cm3: 0, packages: 0 }, shipment_id: null })) } }] },
      ...ulids.map((ulid) => ({ streamId: `task-${ulid}`, expected: 'any' as const, events: [{ type: 'TaskRouted', metadata: meta(), data: { ulid, organization_id, route_id: id, routed_at: now } }] })),
    ])
    await settle(results[0]!.position)
  }

  const removeTask = async (id: number, ulid: string) => {
    const now = new Date().toISOString()
    const results = await store.appendMany([
      { streamId: `route-${id}`, expected: 'any', events: [{ type: 'RouteTaskRemoved', metadata: meta(), data: { route_id: id, organization_id: w.carrier.id, task_ulid: ulid, removed_at: now } }] },
      { streamId: `task-${ulid}`, expected: 'any', events: [{ type: 'TaskUnrouted', metadata: meta(), data: { ulid, organization_id: w.carrier.id, route_id: id, unrouted_at: now } }] },
    ])
    await settle(results[0]!.position)
  }

  const tasks = async (n: number) => {
    const out: string[] = []
    for (let i = 0; i < n; i++) out.push((await w.task()).ulid as string)
    return out
  }

  return { ...w, route, routeEvent, addTasks, removeTask, tasks }
}

export interface SseEvent { id?: string; event?: string; data?: string; comment?: string }

/** A server-sent event stream read over real HTTP: its parsed frames (and comment lines) as they come. */
export interface SseClient {
  status: number
  headers: http.IncomingHttpHeaders
  events: SseEvent[]
  /** Waits until `pred` holds for the frames so far. */
  until(pred: (events: SseEvent[]) => boolean, timeoutMs?: number): Promise<SseEvent[]>
  body: string
  /** Resolves when the server ends the response. */
  ended: Promise<void>
  close(): void
}

export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const events: SseEvent[] = []
      const waiters = new Set<() => void>()
      let buffer = ''
      const client: SseClient = {
        status: res.statusCode ?? 0, headers: res.headers, events, body: '',
        ended: new Promise((done) => { res.on('end', () => done()); res.on('close', () => done()) }),
        until(pred, timeoutMs = 10_000) {
          return new Promise((ok, fail) => {
            const check = () => { if (pred(events)) { waiters.delete(check); clearTimeout(timer); ok(events) } }
            const timer = setTimeout(() => { waiters.delete(check); fail(new Error(`SSE wait timed out; got ${JSON.stringify(events)}`)) }, timeoutMs)
            waiters.add(check)
            check()
          })
        },
        close() { req.destroy() },
      }
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        client.body += chunk
        buffer += chunk
        let end: number
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const e: SseEvent = {}
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) e.comment = line.slice(1).trim()
            else {
              const at = line.indexOf(': ')
              const [k, v] = at < 0 ? [line, ''] : [line.slice(0, at), line.slice(at + 2)]
              if (k === 'id' || k === 'event' || k === 'data') e[k] = v
            }
          }
          if (e.event || e.comment || e.id) events.push(e)
        }
        for (const w of [...waiters]) w()
      })
      res.on('error', () => undefined)
      resolve(client)
    })
    req.on('error', (err) => { if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err) })
  })
}

/** The app listening on a loopback port. */
export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}
