import type { IncomingMessage } from 'node:http'
import type { FastifyError, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'

/**
 * How much of a refused body is read and thrown away before the 413 goes out: a client sending
 * 20 MB of JSON reads its answer; one declaring more, or trickling for longer, gets the 413 at
 * once (or when time is up) and may see its connection reset, as before.
 */
export const DRAIN_MAX_BYTES = 32 * 1024 * 1024
export const DRAIN_MAX_MS = 30_000

/**
 * onError hook for a body refused while it is still arriving (over bodyLimit; a file over the
 * multipart limit). The 413 closes the connection (Fastify adds `Connection: close` since the
 * body's end is unknown, and a client may have asked for it). Closed while the client is still
 * sending, the socket answers the next segments with a reset, and the client sees EPIPE or
 * ECONNRESET instead of the 413 (every time once it sends a little slower than loopback). So the
 * rest of the body is read and discarded first, up to a bound, and the 413 goes out after it.
 * Runs only on errors: a request that succeeds pays nothing.
 */
export function drainRefusedBody(request: FastifyRequest, _reply: FastifyReply, error: FastifyError, done: HookHandlerDoneFunction): void {
  const raw = request.raw
  // `complete`: Node's parser saw the body's end; `readableEnded`/`destroyed` also cover a stream
  // with no `complete` (inject's) and one already over, which would never emit 'end' again.
  const over = raw.complete || raw.readableEnded || raw.destroyed
  if (error.statusCode !== 413 || over || Number(raw.headers['content-length']) > DRAIN_MAX_BYTES) return done()
  drain(raw, DRAIN_MAX_BYTES, DRAIN_MAX_MS, () => done())
}

/** Reads and discards the rest of `raw`; calls `then` at its end, or past maxBytes or maxMs. */
export function drain(raw: IncomingMessage, maxBytes: number, maxMs: number, then: () => void): void {
  let read = 0
  const stop = () => {
    clearTimeout(timer)
    raw.off('data', count)
    raw.off('end', stop)
    raw.off('close', stop)
    then()
  }
  const count = (chunk: Buffer) => { read += chunk.length; if (read > maxBytes) stop() }
  const timer = setTimeout(stop, maxMs)
  raw.on('data', count)
  raw.once('end', stop)
  raw.once('close', stop)
  raw.resume()
}
