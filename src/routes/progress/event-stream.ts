import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { ReadModelDatabase } from '../../../projections/read-model-database.js'
import { openSseChannel } from '../../http/sse-channel.js'
import { ValidationError } from '../../shared/errors.js'
import type { FeedHub } from './feed-hub.js'
import { etaFramesAfter, framesAfter, lastEtaFrame, parseStreamId, readFeedRoute, snapshotOf, streamIdOf, type FeedCursor, type FeedFrame } from './feed-queries.js'
import { etasOfRoute } from './route-etas.js'

/** A client this far behind (bytes it has not read) is dropped; it reconnects with its Last-Event-ID. */
const MAX_BUFFERED = 1024 * 1024

export interface EventStreamOptions {
  rm: Kysely<ReadModelDatabase>
  hub: FeedHub
  routeId: number
  /** From the Last-Event-ID header: the frames after it; null: a `snapshot` frame first. */
  lastEventId: FeedCursor | null
  heartbeatMs: number
  /** Epoch ms: the stream ends then (a live link's expiry). */
  endsAt?: number
  /** Asked again when the route's driver may have changed (`route.updated`): false ends the stream. */
  stillVisible?: () => Promise<boolean>
  /**
   * Frames from elsewhere than the route's feeds (the live page's `driver.position`): called once the
   * stream is open with a sender of id-less frames (they leave the client's Last-Event-ID alone);
   * returns what stops them.
   */
  extra?: (send: (event: string, data: string) => void) => Promise<() => void>
}

/**
 * The `Last-Event-ID` header: absent, or the id of a frame this server sent (a non-negative integer,
 * or `<integer>-<integer>` once the route has ETA frames).
 */
export function lastEventIdOf(req: FastifyRequest): FeedCursor | null {
  const raw = req.headers['last-event-id']
  if (raw === undefined) return null
  const text = Array.isArray(raw) ? raw[0] ?? '' : raw
  const cursor = parseStreamId(text)
  if (!cursor) throw ValidationError.field('Last-Event-ID', 'must be the id of an event of this stream (a non-negative integer, or two joined by a dash).')
  return cursor
}

const frameText = (f: FeedFrame) => `id: ${f.streamId ?? f.id}\nevent: ${f.event}\ndata: ${f.data}\n\n`

/**
 * Answers with a server-sent event stream of one route's feed (the access checks are done: from
 * here on the reply is held open). Ends on client close, a slow client, the link's expiry or shutdown.
 */
export function openEventStream(req: FastifyRequest, reply: FastifyReply, o: EventStreamOptions): void {
  const channel = openSseChannel(req, reply, {
    cacheControl: 'no-cache, no-transform', headers: { 'x-content-type-options': 'nosniff' },
    maxBuffered: MAX_BUFFERED, heartbeatMs: o.heartbeatMs, track: (close) => o.hub.track(close),
  })
  const { write, close } = channel
  if (o.endsAt !== undefined) {
    const ending = setTimeout(close, Math.max(0, o.endsAt - Date.now()))
    ending.unref()
    channel.onClose(() => clearTimeout(ending))
  }

  const start = async (): Promise<FeedCursor> => {
    if (o.lastEventId === null) {
      const [route, eta, etas] = await Promise.all([readFeedRoute(o.rm, o.routeId), lastEtaFrame(o.rm, o.routeId), etasOfRoute(o.rm, o.routeId)])
      const cursor = { feed: route?.last_seq ?? 0, eta }
      if (route) write(frameText({ id: cursor.feed, streamId: streamIdOf(cursor), event: 'snapshot', data: JSON.stringify(snapshotOf(route, etas)) }))
      return cursor
    }
    // The backlog of each feed after the client's place in it, every frame stamped with the place after it.
    const cursor = { ...o.lastEventId }
    for (const kind of ['feed', 'eta'] as const) {
      for (;;) {
        const frames = kind === 'feed' ? await framesAfter(o.rm, o.routeId, cursor.feed) : await etaFramesAfter(o.rm, o.routeId, cursor.eta)
        for (const f of frames) {
          cursor[kind] = f.id
          f.streamId = streamIdOf(cursor)
        }
        if (frames.length) write(frames.map(frameText).join(''))
        if (frames.length < 1000 || channel.closed) break
      }
    }
    return cursor
  }
  const sink = (frames: FeedFrame[]) => {
    write(frames.map(frameText).join(''))
    if (o.stillVisible && frames.some((f) => f.event === 'route.updated')) {
      o.stillVisible().then((yes) => { if (!yes) close() }, () => undefined)
    }
  }
  o.extra?.((event, data) => write(`event: ${event}\ndata: ${data}\n\n`)).then(
    (u) => channel.onClose(u),
    (err) => req.log.warn({ err, route_id: o.routeId }, 'route progress stream: its extra frames failed to start'),
  )
  o.hub.watch(o.routeId, sink, start).then((u) => channel.onClose(u), (err) => {
    // The client reconnects after `retry` with the last id it got: nothing is lost.
    req.log.warn({ err, route_id: o.routeId }, 'route progress stream: its start failed')
    close()
  })
}
