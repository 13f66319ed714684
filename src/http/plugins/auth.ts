import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { OrganizationsTable } from '../../../projections/organizations/tables.js'
import { ForbiddenError, UnauthorizedError } from '../../shared/errors.js'
import type { Actor } from '../../shared/command-handler.js'
import type { Platform } from '../../platform.js'
import { AUTH_CHANGED_CHANNEL, AuthCache } from '../auth-cache.js'
import { changesAuth, hookRoutes } from '../route-hooks.js'

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex')

export type OrganizationRow = Omit<OrganizationsTable, 'suspended_at' | 'created_at' | 'updated_at'> & {
  suspended_at: Date | null
  created_at: Date
  updated_at: Date
}

export interface Principal {
  kind: 'admin' | 'organization' | 'carrier'
  tokenId: string
  organization?: OrganizationRow
  carrierId?: string
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal
  }
}

const bearer = (req: FastifyRequest): string => {
  const h = req.headers.authorization
  if (!h) throw new UnauthorizedError('Missing bearer token.')
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h)
  if (!m) throw new UnauthorizedError('The Authorization header must be "Bearer <token>".')
  return m[1]!
}

export const actorOf = (req: FastifyRequest): Actor => {
  const p = req.principal
  if (!p) return { kind: 'system', id: 'anonymous' }
  if (p.kind === 'admin') return { kind: 'admin', id: 'admin' }
  if (p.kind === 'carrier') return { kind: 'carrier', id: p.carrierId! }
  return { kind: 'organization', id: p.organization!.id }
}

/** The organization behind the request; routes under /api/v1 always have one. */
export const organizationOf = (req: FastifyRequest): OrganizationRow => {
  const org = req.principal?.organization
  if (!org) throw new UnauthorizedError()
  return org
}

/**
 * Bearer authentication (DESIGN §3.1): tokens are looked up by hash in the read model;
 * a suspended organization gets 403 on every call; with BASE_DOMAIN set, a request to another
 * organization's subdomain is refused.
 */
export default fp(async function auth(app: FastifyInstance, { platform }: { platform: Platform }) {
  const adminHash = Buffer.from(hashToken(platform.adminToken), 'hex')
  app.decorateRequest('principal', undefined)

  app.decorate('authenticateAdmin', async (req: FastifyRequest) => {
    const given = Buffer.from(hashToken(bearer(req)), 'hex')
    if (!timingSafeEqual(given, adminHash)) throw new UnauthorizedError('Invalid admin token.')
    req.principal = { kind: 'admin', tokenId: 'admin' }
  })

  const cache = new AuthCache<OrganizationRow>({ ttlMs: platform.config.authCacheTtlMs, maxEntries: 10_000 })
  if (platform.config.authCacheTtlMs > 0) {
    const unlisten = await platform.database.listen(AUTH_CHANGED_CHANNEL, (orgId) => (orgId ? cache.dropOrganization(orgId) : cache.clear()))
    app.addHook('onClose', async () => { await unlisten() })
    // A write answered here that may have changed a token or an organization: its caller's next
    // request must see that, whenever the NOTIFY arrives. Runs before the response leaves.
    hookRoutes(app, changesAuth, 'onSend', async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      if (reply.statusCode >= 500) return payload
      const p = req.principal
      if (p?.kind === 'organization') cache.dropOrganization(p.organization!.id)
      else if (p) cache.clear()
      return payload
    })
  }

  const loadOrganizationToken = async (tokenHash: string) => {
    const generation = cache.begin()
    const row = await platform.rm.selectFrom('access_tokens as t')
      .innerJoin('organizations as o', 'o.id', 't.subject_id')
      .selectAll('o')
      .select(['t.token_id', 't.revoked_at', 't.expires_at'])
      .where('t.token_hash', '=', tokenHash)
      .where('t.kind', '=', 'organization')
      .executeTakeFirst()
    // Unknown and revoked tokens are not cached: nobody can fill the cache with guesses.
    if (!row || row.revoked_at) return undefined
    const { token_id, revoked_at: _r, expires_at, ...org } = row
    const organization = Object.freeze({ ...org, roles: Object.freeze(typeof org.roles === 'string' ? JSON.parse(org.roles) : org.roles) }) as OrganizationRow
    const found = { tokenId: token_id, expiresAt: expires_at, organization }
    cache.set(tokenHash, organization.id, found, generation)
    return found
  }

  // A SHA-256 per request is a measurable share of a cached GET: the tokens that authenticated keep
  // their hash here (never a token that failed, so guesses cannot fill it; a hash never goes stale).
  const hashes = new Map<string, string>()
  const rememberHash = (token: string, tokenHash: string) => {
    if (hashes.size >= 10_000) hashes.clear()
    hashes.set(token, tokenHash)
  }

  /**
   * As an onRequest hook it answers a cached token synchronously (no promise, no extra tick); a
   * miss, or a call without `done`, goes through the promise.
   */
  function authenticateOrganization(req: FastifyRequest, _reply?: FastifyReply, done?: (err?: Error) => void): Promise<void> | undefined {
    const token = bearer(req)
    const known = hashes.get(token)
    const hit = known === undefined ? undefined : cache.get(known)
    if (hit && done) {
      admitOrganization(req, hit)
      done()
      return undefined
    }
    return (async () => {
      const tokenHash = known ?? hashToken(token)
      const found = hit ?? cache.get(tokenHash) ?? await loadOrganizationToken(tokenHash)
      admitOrganization(req, found)
      rememberHash(token, tokenHash)
    })()
  }
  app.decorate('authenticateOrganization', authenticateOrganization)

  const admitOrganization = (req: FastifyRequest, found: { tokenId: string; expiresAt: Date | null; organization: OrganizationRow } | undefined) => {
    if (!found || (found.expiresAt && found.expiresAt < platform.clock())) {
      throw new UnauthorizedError('Invalid or revoked access token.')
    }
    const { organization } = found
    if (organization.suspended_at) throw new ForbiddenError('This organization is suspended.', 'organization_suspended')
    const base = platform.config.baseDomain
    if (base) {
      const host = (req.headers.host ?? '').split(':')[0]!.toLowerCase()
      if (host.endsWith(`.${base}`)) {
        const sub = host.slice(0, -(base.length + 1))
        if (sub !== organization.subdomain) throw new ForbiddenError('This token belongs to another organization.', 'wrong_subdomain')
      }
    }
    req.principal = { kind: 'organization', tokenId: found.tokenId, organization }
  }

  /** Carrier API keys: the same hashed-token table, kind `carrier`, subject = the carrier id. */
  app.decorate('authenticateCarrier', async (req: FastifyRequest) => {
    const row = await platform.rm.selectFrom('access_tokens as t')
      .leftJoin('carriers as c', 'c.id', 't.subject_id')
      .leftJoin('organizations as o', 'o.id', 'c.organization_id')
      .select(['t.token_id', 't.subject_id', 't.revoked_at', 't.expires_at', 'o.suspended_at'])
      .where('t.token_hash', '=', hashToken(bearer(req)))
      .where('t.kind', '=', 'carrier')
      .executeTakeFirst()
    if (!row || row.revoked_at || (row.expires_at && row.expires_at < platform.clock())) {
      throw new UnauthorizedError('Invalid or revoked API key.')
    }
    // A suspended organization's carriers are suspended with it (DESIGN §3.1: every call gets 403).
    if (row.suspended_at) throw new ForbiddenError('The organization of this carrier is suspended.', 'organization_suspended')
    req.principal = { kind: 'carrier', tokenId: row.token_id, carrierId: row.subject_id }
  })

  /** For endpoints the specification reserves for carriers: a shipper-only organization gets 403. */
  app.decorate('requireCarrierRole', async (req: FastifyRequest) => {
    const org = organizationOf(req)
    if (!org.roles.includes('carrier')) throw new ForbiddenError('This endpoint is reserved for carrier organizations.', 'carrier_role_required')
  })
}, { name: 'auth' })

declare module 'fastify' {
  interface FastifyInstance {
    authenticateAdmin(req: FastifyRequest): Promise<void>
    authenticateOrganization(req: FastifyRequest, reply?: FastifyReply, done?: (err?: Error) => void): Promise<void> | undefined
    authenticateCarrier(req: FastifyRequest): Promise<void>
    requireCarrierRole(req: FastifyRequest): Promise<void>
  }
}
