import type { OutgoingHttpHeaders } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { clientKey } from './client-address.js'
import { drainRetryFrame } from './stream-drain.js'

export interface SseChannelOptions {
  cacheControl: string
  /** Further headers (e.g. `x-content-type-options`). */
  headers?: OutgoingHttpHeaders
  /** A client this far behind (bytes it has not read) is dropped; it reconnects with its Last-Event-ID. */
  maxBuffered: number
  heartbeatMs: number
  /** Registers the channel's closer (e.g. with the hub's open streams, for shutdown); returns what unregisters it. */
  track: (close: () => void) => () => void
}

export interface SseChannel {
  /** Sends text as is (whole frames); nothing once closed. Closes and destroys a client too far behind. */
  write(text: string): void
  /** Ends the stream once: the heartbeat stops, the channel is untracked, the cleanups run, the response ends. */
  close(): void
  readonly closed: boolean
  /** Runs `fn` when the channel closes (after untracking, in the order added); at once when it is closed already. */
  onClose(fn: () => void): void
}

/**
 * Takes the reply over as a server-sent event stream: the status and headers (with those the hooks
 * set so far, such as CORS), a `retry` of 2 s, a comment heartbeat, and the end on client close or
 * error. The caller writes the frames. Every stream holds one of the process's stream slots
 * (`SSE_STREAMS_PER_ADDRESS`, `SSE_STREAMS_PER_PROCESS`) until it closes: beyond a cap this throws
 * TooManyStreams before anything is written, and the error handler answers 429 with Retry-After.
 * When the process drains (shutdown, stream-drain.ts) the stream ends with a short, spread `retry:`
 * so the client reconnects elsewhere; one opened during the drain ends so at once.
 */
export function openSseChannel(req: FastifyRequest, reply: FastifyReply, o: SseChannelOptions): SseChannel {
  const release = req.server.streamSlots.take(clientKey(req.ip))
  reply.hijack()
  const raw = reply.raw
  raw.writeHead(200, {
    // What the hooks set so far (CORS for a browser app on another origin) goes out with the stream.
    ...(reply.getHeaders() as OutgoingHttpHeaders),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': o.cacheControl,
    'x-accel-buffering': 'no',
    // The connection ends with the stream: a proxy must not pool it, or a stream ended by a draining
    // process leaves it a connection about to close, which it may pick for a POST (a 502).
    connection: 'close',
    ...o.headers,
    'x-request-id': req.id,
  })
  raw.write('retry: 2000\n\n')

  let closed = false
  const cleanups: (() => void)[] = []
  const close = () => {
    if (closed) return
    closed = true
    clearInterval(heartbeat)
    untrack()
    unhold()
    release()
    for (const fn of cleanups) fn()
    if (!raw.writableEnded) raw.end()
  }
  const write = (text: string) => {
    if (closed) return
    raw.write(text)
    if (raw.writableLength > o.maxBuffered) { close(); raw.destroy() }
  }
  const heartbeat = setInterval(() => write(': heartbeat\n\n'), o.heartbeatMs)
  heartbeat.unref()
  const untrack = o.track(close)
  const drain = req.server.streamDrain
  const endForDrain = () => { write(drainRetryFrame()); close() }
  const unhold = drain.hold(endForDrain)
  raw.on('close', close)
  raw.on('error', close)
  // A client that left while the stream's checks ran (its 'close' came before the listener): end it now,
  // or its slot, heartbeat and watch would be held for good.
  if (req.raw.socket?.destroyed) close()
  else if (drain.begun) endForDrain()
  return {
    write,
    close,
    get closed() { return closed },
    onClose(fn) {
      if (closed) fn()
      else cleanups.push(fn)
    },
  }
}
