import type { OutgoingHttpHeaders } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { TrackingLocale } from './locale.js'
import type { TrackingHub } from './tracking-hub.js'

/** A client this far behind (bytes it has not read) is dropped; it reconnects with its Last-Event-ID. */
const MAX_BUFFERED = 256 * 1024

/**
 * A tracking page's server-sent events: `tracking` frames, each the whole view with its id (a hash
 * of it), sent when the view changes; `gone` when the link stops opening anything. A client
 * reconnecting with the id of the view it has gets nothing until it changes, else the view now.
 */
export function openTrackingStream(
  req: FastifyRequest, reply: FastifyReply, o: { hub: TrackingHub; ulid: string; locale: TrackingLocale; lastId: string | null; heartbeatMs: number },
): void {
  reply.hijack()
  const raw = reply.raw
  raw.writeHead(200, {
    ...(reply.getHeaders() as OutgoingHttpHeaders),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'private, no-store, no-transform',
    'x-accel-buffering': 'no',
    'x-request-id': req.id,
  })
  raw.write('retry: 2000\n\n')
  let closed = false
  const close = () => {
    if (closed) return
    closed = true
    clearInterval(heartbeat)
    untrack()
    unwatch()
    if (!raw.writableEnded) raw.end()
  }
  const write = (text: string) => {
    if (closed) return
    raw.write(text)
    if (raw.writableLength > MAX_BUFFERED) { close(); raw.destroy() }
  }
  const heartbeat = setInterval(() => write(': heartbeat\n\n'), o.heartbeatMs)
  heartbeat.unref()
  const untrack = o.hub.track(close)
  const unwatch = o.hub.watch(o.ulid, {
    locale: o.locale,
    lastId: o.lastId,
    send: (id, json) => write(`id: ${id}\nevent: tracking\ndata: ${json}\n\n`),
    gone: () => { write('event: gone\ndata: {}\n\n'); close() },
  })
  raw.on('close', close)
  raw.on('error', close)
}
