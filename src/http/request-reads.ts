import type { FastifyReply } from 'fastify'
import type { Platform, RequestReadHandles } from '../platform.js'

const opened = new WeakMap<FastifyReply, RequestReadHandles>()

/**
 * The request's read handles (platform.readsFor), opened once per request: a handler passes them
 * to its own reads (a listing's queries) and to nothing that outlives the request or is shared with
 * others (a cache load, a hub, an append), which keep the platform's handles and are never cut.
 */
export function readsOf(platform: Pick<Platform, 'readsFor'>, reply: FastifyReply): RequestReadHandles {
  let reads = opened.get(reply)
  if (!reads) {
    reads = platform.readsFor(clientGone(reply))
    opened.set(reply, reads)
  }
  return reads
}

/**
 * Aborts when the response closes before it was written to its end: the client disconnected (or
 * the server dropped the socket). Not Fastify's `request.signal`: it follows the request stream,
 * which closes once a body has been read, long before the answer.
 */
function clientGone(reply: FastifyReply): AbortSignal {
  const ac = new AbortController()
  const res = reply.raw
  res.once('close', () => { if (!res.writableFinished) ac.abort() })
  return ac.signal
}
