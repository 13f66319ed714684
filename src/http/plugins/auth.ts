import { timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { OrganizationsTable } from '../../../projections/organizations/tables.js'
import { ForbiddenError, UnauthorizedError } from '../../shared/errors.js'
import type { Actor } from '../../shared/command-handler.js'
import { hashToken } from '../../shared/tokens.js'
import type { Platform } from '../../platform.js'
import { AuthCache, type CachedToken } from '../auth-cache.js'

export type OrganizationRow = Omit<OrganizationsTable, 'suspended_at' | 'created_at' | 'updated_at'> & {
  suspended_at: Date | null
  created_at: Date
  updated_at: Date
}

/**
 * Who authenticated, one shape per API area: the kind says which field is there. Handlers read it
 * through `organizationOf(req)` / `carrierIdOf(req)`; the absent field is declared `undefined` so
 * that code reading it without narrowing on `kind` still compiles.
 */
export type Principal =
  | { kind: 'admin'; tokenId: string; organization?: undefined; carrierId?: undefined; user?: undefined }
  | { kind: 'organization'; tokenId: string; organization: OrganizationRow; carrierId?: undefined; user?: undefined }
  | { kind: 'user'; tokenId: string; organization: OrganizationRow; user: UserRef; carrierId?: undefined }
  | { kind: 'carrier'; tokenId: string; carrierId: string; organization?: undefined; user?: undefined }

/** A user of an organization (DESIGN §3.9): a dispatcher acts as the organization; a driver only on its own work. */
export interface UserRef { id: string; name: string; role: 'dispatcher' | 'driver' }

/** Who calls the routes API: the organization, and the user when a user's token was sent. */
export interface Caller { organization: OrganizationRow; user: UserRef | null }

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
  if (p.kind === 'carrier') return { kind: 'carrier', id: p.carrierId }
  if (p.kind === 'user') return { kind: 'user', id: p.user.id }
  return { kind: 'organization', id: p.organization.id }
}

/**
 * The organization behind the request; routes under /api/v1 always have one (its area's onRequest
 * hook authenticated it), so the 401 is only reached by a route registered in the wrong area.
 */
export const organizationOf = (req: FastifyRequest): OrganizationRow => {
  const p = req.principal
  if (p?.kind !== 'organization' && p?.kind !== 'user') throw new UnauthorizedError()
  return p.organization
}

/** The organization and, for a user's token, the user (a driver's reach is narrowed by its routes). */
export const callerOf = (req: FastifyRequest): Caller => {
  const p = req.principal
  if (p?.kind === 'organization') return { organization: p.organization, user: null }
  if (p?.kind === 'user') return { organization: p.organization, user: p.user }
  throw new UnauthorizedError()
}

/** The driver behind the request, or null for the organization's own token or a dispatcher's. */
export const driverOf = (req: FastifyRequest): UserRef | null => {
  const p = req.principal
  return p?.kind === 'user' && p.user.role === 'driver' ? p.user : null
}

/** The hub carrier (`car_…`) behind the API key; routes under /carrier/v1 always have one. */
export const carrierIdOf = (req: FastifyRequest): string => {
  const p = req.principal
  if (p?.kind !== 'carrier') throw new UnauthorizedError()
  return p.carrierId
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

  const cache = new AuthCache<OrganizationRow, UserRef>({ ttlMs: platform.config.authCacheTtlMs, maxEntries: 10_000 })
  if (platform.config.authCacheTtlMs > 0) {
    const unsubscribe = await platform.changes.subscribe(cache.subscriber)
    app.addHook('onClose', async () => { unsubscribe() })
  }

  // Organization tokens and users' tokens (dispatchers, drivers) are looked up alike: a user's
  // token authenticates as its organization, with the user attached.
  const loadOrganizationToken = async (tokenHash: string): Promise<TokenEntry | undefined> => {
    const row = await platform.rm.selectFrom('access_tokens as t')
      .leftJoin('users as u', (j) => j.onRef('u.id', '=', 't.subject_id').on('t.kind', '=', 'user'))
      .innerJoin('organizations as o', (j) => j.on((eb) => eb('o.id', '=', eb.fn.coalesce('u.organization_id', 't.subject_id'))))
      .selectAll('o')
      .select(['t.token_id', 't.revoked_at', 't.expires_at', 't.kind', 'u.id as user_id', 'u.name as user_name', 'u.role as user_role', 'u.status as user_status'])
      .where('t.token_hash', '=', tokenHash)
      .where('t.kind', 'in', ['organization', 'user'])
      .executeTakeFirst()
    // Unknown and revoked tokens are not cached: nobody can fill the cache with guesses.
    if (!row || row.revoked_at) return undefined
    const { token_id, revoked_at: _r, expires_at, kind, user_id, user_name, user_role, user_status, ...org } = row
    if (kind === 'user' && (user_id === null || user_status !== 'active')) return undefined
    const organization = Object.freeze({ ...org, roles: Object.freeze(typeof org.roles === 'string' ? JSON.parse(org.roles) : org.roles) }) as OrganizationRow
    const user = kind === 'user' ? Object.freeze({ id: user_id!, name: user_name!, role: user_role! }) : null
    return { tokenId: token_id, expiresAt: expires_at, organization, user, organizationId: organization.id }
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
      const found = hit ?? await cache.getOrLoad(tokenHash, () => loadOrganizationToken(tokenHash))
      admitOrganization(req, found)
      rememberHash(token, tokenHash)
    })()
  }
  app.decorate('authenticateOrganization', authenticateOrganization)

  const admitOrganization = (req: FastifyRequest, found: CachedToken<OrganizationRow, UserRef> | undefined) => {
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
    req.principal = found.user
      ? { kind: 'user', tokenId: found.tokenId, organization, user: found.user }
      : { kind: 'organization', tokenId: found.tokenId, organization }
  }

  /**
   * Drivers reach only what a route opts them into (`config: { drivers: true }`; DESIGN §3.9): every
   * other route of the routes API answers 403, so a new route is closed to drivers unless it says so.
   */
  app.decorate('refuseDrivers', function refuseDrivers(req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) {
    const p = req.principal
    if (p?.kind === 'user' && p.user.role === 'driver' && req.routeOptions.config.drivers !== true) {
      return done(new ForbiddenError('A driver\'s token cannot use this endpoint.', 'driver_not_allowed'))
    }
    done()
  })

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

type TokenEntry = { tokenId: string; expiresAt: Date | null; organization: OrganizationRow; user: UserRef | null; organizationId: string }

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Opens a routes-API endpoint to drivers' tokens (closed by default). */
    drivers?: boolean
  }
  interface FastifyInstance {
    refuseDrivers(req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void
    authenticateAdmin(req: FastifyRequest): Promise<void>
    authenticateOrganization(req: FastifyRequest, reply?: FastifyReply, done?: (err?: Error) => void): Promise<void> | undefined
    authenticateCarrier(req: FastifyRequest): Promise<void>
    requireCarrierRole(req: FastifyRequest): Promise<void>
  }
}
