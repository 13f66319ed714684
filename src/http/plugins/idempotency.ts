import { createHash, randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { IllegalStateError, ValidationError } from '../../shared/errors.js'
import type { Platform } from '../../platform.js'
import { decryptSecret, encryptSecret, isSealed } from '../../shared/secret-box.js'
import { hookRoutes, isPostRoute } from '../route-hooks.js'

const DAY_MS = 24 * 3600 * 1000
/**
 * A claim still without a response after this long belongs to a process that died mid-request
 * (no request here lasts minutes): a retry may take it over instead of waiting out the 24 h.
 */
const ABANDONED_CLAIM_MS = 5 * 60 * 1000

/** JSON with object keys sorted: the same body sent with its keys in another order is the same request. */
export const canonicalJson = (value: unknown): string => JSON.stringify(value, (_k, v: unknown) =>
  isRecord(v) && !Array.isArray(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]])) : v) ?? 'null'

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null
}

/**
 * A kept response may be the only place a credential is shown (an organization's first token, a
 * carrier's API key and `whsec_` secret), so every one is sealed under SECRETS_KEY, whatever the
 * route: none can be forgotten. The scope and key are its authenticated context, so a record
 * copied under another caller or key does not open.
 */
const sealResponse = (secretsKey: Buffer, scope: string, key: string, body: string): string =>
  encryptSecret(secretsKey, body, `idempotency\n${scope}\n${key}`)

/**
 * The first response again. A record written before responses were sealed (plain JSON, at most
 * 24 h old) is still answered as it is; none is written that way any more. One that does not open
 * (SECRETS_KEY changed, the row altered) cannot be answered faithfully: a 500, logged, rather than
 * running the request a second time.
 */
function openResponse(secretsKey: Buffer, scope: string, key: string, stored: string): string {
  if (!isSealed(stored)) return stored
  try {
    return decryptSecret(secretsKey, stored, `idempotency\n${scope}\n${key}`)
  } catch {
    throw new Error(`The response kept for Idempotency-Key in scope ${scope} does not open under SECRETS_KEY`)
  }
}

/**
 * A claim on a key. `eventId` is drawn with the claim and kept while the key is retried: a command
 * may name its event with it, so that a retry after a failure that came once the command had
 * committed (the database dropped the connection before the answer was written) finds that event
 * instead of running the command twice. `retried`: an earlier claim on the key ended without a
 * kept response (answered 5xx, or abandoned).
 */
export interface IdempotencyClaim { scope: string; key: string; eventId: string; retried: boolean }

declare module 'fastify' {
  interface FastifyRequest { idempotency?: IdempotencyClaim }
}

/**
 * `status_code` of a claim whose request was answered 5xx: the key may be retried at once, and its
 * `response_body` still holds the claim's event id (a claim in progress is 0, with the same).
 */
const FAILED = -1

/** A kept claim's event id (records claimed before there were any have an empty body). */
const eventIdOf = (body: string): string | undefined => (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(body) ? body : undefined)

/** While the database cannot be reached, a claim's outcome is written again this often, for as long as a claim may stay in progress. */
const SETTLE_RETRY_MS = 500

const scopeOf = (req: FastifyRequest) => {
  const p = req.principal
  if (!p) return 'anonymous'
  return p.kind === 'organization' ? `org:${p.organization!.id}` : p.kind === 'carrier' ? `car:${p.carrierId}` : 'admin'
}

/**
 * `Idempotency-Key` on any POST (DESIGN §3.3): the same key and body within 24 h answers the first
 * response and appends nothing; the same key with another body is a 422. The record is claimed
 * before the handler runs, so two concurrent retries cannot both execute.
 */
export default fp(async function idempotency(app: FastifyInstance, { platform }: { platform: Platform }) {
  const db = platform.db
  app.decorateRequest('idempotency', undefined)

  // On POST routes only, after their own preHandlers (a request refused by a role check claims nothing).
  hookRoutes(app, isPostRoute, 'preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    const raw = req.headers['idempotency-key']
    if (raw === undefined) return
    const key = Array.isArray(raw) ? raw[0]! : raw
    if (key.length === 0 || key.length > 255) {
      throw ValidationError.field('idempotency_key', 'The Idempotency-Key header must be 1 to 255 characters.')
    }
    const scope = scopeOf(req)
    const hash = createHash('sha256').update(`${req.method} ${req.url}\n`).update(canonicalJson(req.body ?? null)).digest('hex')
    const cutoff = new Date(platform.clock().getTime() - DAY_MS)
    await db.deleteFrom('idempotency_keys').where('scope', '=', scope).where('key', '=', key).where('created_at', '<', cutoff).execute()
    const eventId = randomUUID()
    const claimedAt = platform.clock()
    const claimed = await db.insertInto('idempotency_keys')
      .values({ scope, key, request_hash: hash, status_code: 0, response_body: eventId, created_at: claimedAt })
      .onConflict((oc) => oc.columns(['scope', 'key']).doNothing())
      .executeTakeFirst()
      .catch(releaseUncertain(req, scope, key, eventId, claimedAt))
    if (Number(claimed.numInsertedOrUpdatedRows ?? 0) === 1) {
      req.idempotency = { scope, key, eventId, retried: false }
      return
    }
    const prior = await db.selectFrom('idempotency_keys').selectAll().where('scope', '=', scope).where('key', '=', key).executeTakeFirst()
    if (!prior) throw new IllegalStateError('The request with this Idempotency-Key is being retried; try again.', 'idempotency_in_progress')
    if (prior.request_hash !== hash) {
      throw ValidationError.field('idempotency_key', 'This Idempotency-Key was already used with a different request.')
    }
    if (prior.status_code === 0 || prior.status_code === FAILED) {
      // A failed claim is retried at once, an abandoned one after ABANDONED_CLAIM_MS; either way
      // under the same event id, which tells whether the first try's command committed after all.
      const now = platform.clock()
      const priorId = eventIdOf(prior.response_body)
      const takeoverId = priorId ?? randomUUID()
      const takenOver = await db.updateTable('idempotency_keys')
        .set({ status_code: 0, created_at: now, response_body: takeoverId })
        .where('scope', '=', scope).where('key', '=', key).where('status_code', '=', prior.status_code)
        .where('response_body', '=', prior.response_body)
        .$if(prior.status_code === 0, (q) => q.where('created_at', '<', new Date(now.getTime() - ABANDONED_CLAIM_MS)))
        .returning('response_body')
        .executeTakeFirst()
        .catch(releaseUncertain(req, scope, key, takeoverId, now))
      if (takenOver) {
        req.idempotency = { scope, key, eventId: takenOver.response_body, retried: true }
        return
      }
      // Its outcome may only be waiting to be written (settle below): worth asking again shortly.
      reply.header('retry-after', '1')
      throw new IllegalStateError('A request with this Idempotency-Key is still in progress.', 'idempotency_in_progress')
    }
    reply.header('idempotent-replayed', 'true').header('content-type', 'application/json; charset=utf-8')
    return reply.code(prior.status_code).send(openResponse(platform.secretsKey, scope, key, prior.response_body))
  })

  // First of the route's onSend hooks: @fastify/compress (registered earlier, so its hook is already
  // on the route) turns a body over 1 KiB into compressed bytes, and a key kept only for string
  // bodies would lapse for every client that sends Accept-Encoding. The replay is compressed anew.
  hookRoutes(app, isPostRoute, 'onSend', async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const claim = req.idempotency
    if (!claim) return payload
    req.idempotency = undefined
    const mine = () => db.updateTable('idempotency_keys')
      .where('scope', '=', claim.scope).where('key', '=', claim.key).where('status_code', '=', 0).where('response_body', '=', claim.eventId)
    if (reply.statusCode >= 500) {
      // A failure may succeed on retry: the key is free again, its event id kept (see FAILED).
      await settle(req, () => mine().set({ status_code: FAILED }).execute())
    } else if (typeof payload !== 'string') {
      // A streamed body cannot be replayed: release the key.
      await settle(req, () => db.deleteFrom('idempotency_keys').where('scope', '=', claim.scope).where('key', '=', claim.key)
        .where('status_code', '=', 0).where('response_body', '=', claim.eventId).execute())
    } else {
      const sealed = sealResponse(platform.secretsKey, claim.scope, claim.key, payload)
      await settle(req, () => mine().set({ status_code: reply.statusCode, response_body: sealed }).execute())
    }
    return payload
  }, 'first')

  /**
   * A claim whose write failed may still have committed (the connection dropped after the commit,
   * before the answer): nobody would settle it, and every retry would be told `in progress` until
   * it counts as abandoned, minutes later. It is marked failed once the database answers again; a
   * claim that never committed matches nothing. The event id and time are this claim's own, so
   * another request's claim on the key is never touched.
   */
  function releaseUncertain(req: FastifyRequest, scope: string, key: string, eventId: string, at: Date) {
    return (err: unknown): never => {
      if (!eventIdOf(eventId)) throw err
      void settle(req, () => db.updateTable('idempotency_keys').set({ status_code: FAILED })
        .where('scope', '=', scope).where('key', '=', key).where('status_code', '=', 0)
        .where('response_body', '=', eventId).where('created_at', '=', at).execute())
      throw err
    }
  }

  /**
   * Writes a claim's outcome before the answer goes out (a retry sent after it finds it). A write
   * that fails does not turn the answer into an error: a 201 whose record cannot be written now is
   * still the 201, not a 5xx after the fact. It is written again every half second, for as long as a
   * claim may stay in progress, so a database restart delays the record rather than losing it;
   * meanwhile a retry is told the key is in progress.
   */
  async function settle(req: FastifyRequest, write: () => Promise<unknown>): Promise<void> {
    const giveUpAt = Date.now() + ABANDONED_CLAIM_MS
    const attempt = async (): Promise<void> => {
      try {
        await write()
      } catch (err) {
        if (closed || Date.now() > giveUpAt) {
          req.log.error({ err }, 'the outcome of an Idempotency-Key claim was not recorded; the claim is taken over once abandoned')
          return
        }
        req.log.warn({ err }, 'the outcome of an Idempotency-Key claim was not recorded yet; retrying')
        const timer = setTimeout(() => { pending.delete(timer); void attempt() }, SETTLE_RETRY_MS)
        timer.unref()
        pending.add(timer)
      }
    }
    await attempt()
  }
  let closed = false
  const pending = new Set<NodeJS.Timeout>()
  app.addHook('onClose', async () => {
    closed = true
    for (const t of pending) clearTimeout(t)
  })
}, { name: 'idempotency', dependencies: ['auth', 'compress'] })
