import { createHash } from 'node:crypto'
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

declare module 'fastify' {
  interface FastifyRequest { idempotency?: { scope: string; key: string } }
}

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
    const claimed = await db.insertInto('idempotency_keys')
      .values({ scope, key, request_hash: hash, status_code: 0, response_body: '', created_at: platform.clock() })
      .onConflict((oc) => oc.columns(['scope', 'key']).doNothing())
      .executeTakeFirst()
    if (Number(claimed.numInsertedOrUpdatedRows ?? 0) === 1) {
      req.idempotency = { scope, key }
      return
    }
    const prior = await db.selectFrom('idempotency_keys').selectAll().where('scope', '=', scope).where('key', '=', key).executeTakeFirst()
    if (!prior) throw new IllegalStateError('The request with this Idempotency-Key is being retried; try again.', 'idempotency_in_progress')
    if (prior.request_hash !== hash) {
      throw ValidationError.field('idempotency_key', 'This Idempotency-Key was already used with a different request.')
    }
    if (prior.status_code === 0) {
      const now = platform.clock()
      const takenOver = await db.updateTable('idempotency_keys').set({ created_at: now })
        .where('scope', '=', scope).where('key', '=', key).where('status_code', '=', 0)
        .where('created_at', '<', new Date(now.getTime() - ABANDONED_CLAIM_MS))
        .executeTakeFirst()
      if (Number(takenOver.numUpdatedRows) === 1) {
        req.idempotency = { scope, key }
        return
      }
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
    if (reply.statusCode >= 500 || typeof payload !== 'string') {
      // A failure may succeed on retry, and a streamed body cannot be replayed: release the key.
      await db.deleteFrom('idempotency_keys').where('scope', '=', claim.scope).where('key', '=', claim.key).execute()
      return payload
    }
    const sealed = sealResponse(platform.secretsKey, claim.scope, claim.key, payload)
    await db.updateTable('idempotency_keys').set({ status_code: reply.statusCode, response_body: sealed })
      .where('scope', '=', claim.scope).where('key', '=', claim.key).execute()
    return payload
  }, 'first')
}, { name: 'idempotency', dependencies: ['auth', 'compress'] })
