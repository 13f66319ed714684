import type { FastifyReply, FastifyRequest } from 'fastify'
import { openSseChannel } from '../http/sse-channel.js'
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
  const channel = openSseChannel(req, reply, {
    cacheControl: 'private, no-store, no-transform', maxBuffered: MAX_BUFFERED, heartbeatMs: o.heartbeatMs, track: (close) => o.hub.track(close),
  })
  channel.onClose(o.hub.watch(o.ulid, {
    locale: o.locale,
    lastId: o.lastId,
    send: (id, json) => channel.write(`id: ${id}\nevent: tracking\ndata: ${json}\n\n`),
    gone: () => { channel.write('event: gone\ndata: {}\n\n'); channel.close() },
  }))
}
