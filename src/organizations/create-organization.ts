import { sql } from 'kysely'
import { ConcurrencyError } from '../infrastructure/event-store/event-store.js'
import { CreateOrganizationBody, type CreateOrganizationBody as Body, CreatedOrganization } from '../../schemas/api/organizations.js'
import { errorResponses } from '../../schemas/api/common.js'
import type { Decider } from '../shared/decider.js'
import { IllegalStateError, ErrorBag } from '../shared/errors.js'
import { publicId } from '../shared/ids.js'
import { appendDecided, handleCommand, type CommandContext } from '../shared/command-handler.js'
import { isIso4217 } from '../shared/currency.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { fieldChecks, type FieldCheck } from '../http/plugins/validation.js'
import type { Platform } from '../platform.js'
import { evolve, initialState, streamOf, type OrganizationEvent, type OrganizationState } from './organization.js'
import { findOrganization, toOrganization } from './queries.js'
import { newAccessToken } from './access-token.js'
import { stream } from '../../schemas/events/streams.js'

export interface CreateOrganization {
  type: 'CreateOrganization'
  data: Body & { id: string; internal_id: number; token_id: string; token_hash: string; now: Date }
}

export function decide(command: CreateOrganization, state: OrganizationState): OrganizationEvent[] {
  if (state.exists) throw new IllegalStateError('The organization already exists.', 'organization_exists')
  const d = command.data
  const at = d.now.toISOString()
  return [
    {
      type: 'OrganizationCreated',
      data: {
        id: d.id, internal_id: d.internal_id, name: d.name.trim(), subdomain: d.subdomain, roles: [...new Set(d.roles)],
        currency: (d.currency ?? 'USD').toUpperCase(), locale: d.locale ?? 'en', timezone: d.timezone ?? 'UTC',
        market: d.market ?? null, carriers_enabled: d.carriers_enabled ?? false, created_at: at,
      },
    },
    { type: 'TokenIssued', data: { token_id: d.token_id, token_hash: d.token_hash, issued_at: at } },
  ]
}

export const decider: Decider<OrganizationState, CreateOrganization, OrganizationEvent> = { decide, evolve, initialState }

const validTimezone = (tz: string) => {
  try { new Intl.DateTimeFormat('en', { timeZone: tz }); return true } catch { return false }
}

/** The body's cross-field and value checks, reported in one 422 with the schema's errors. */
const checkOrganizationBody: FieldCheck = (body, errors) => {
  if (typeof body.currency === 'string' && !isIso4217(body.currency)) errors.add('currency', 'The currency must be an ISO 4217 code.')
  if (typeof body.timezone === 'string' && !validTimezone(body.timezone)) errors.add('timezone', 'The timezone must be an IANA time zone name.')
  if (body.carriers_enabled === true && Array.isArray(body.roles) && !body.roles.includes('carrier')) {
    errors.add('carriers_enabled', 'Only a carrier organization can be enabled to create carriers.')
  }
}

/** `body` passed the route's schema and `checkOrganizationBody`. */
export async function createOrganization(platform: Platform, body: Body, ctx: CommandContext) {
  const errors = new ErrorBag()
  // A subdomain is claimed by creating its own stream: the append's no-stream check makes it unique
  // without a read-model race.
  const id = publicId('org')
  try {
    await appendDecided(platform.commands, [{ streamId: stream.subdomain(body.subdomain), events: [{ type: 'SubdomainClaimed', data: { organization_id: id } }], expected: 'no_stream' }], ctx, { wait: false })
  } catch (err) {
    if (err instanceof ConcurrencyError) errors.add('subdomain', 'The subdomain has already been taken.')
    else throw err
  }
  errors.throwIfAny()
  const seq = await sql<{ id: number }>`select nextval('organization_internal_id_seq')::int as id`.execute(platform.db)
  const { token, tokenId, tokenHash } = newAccessToken()
  await handleCommand(platform.commands, streamOf(id), decider, {
    type: 'CreateOrganization',
    data: { ...body, id, internal_id: seq.rows[0]!.id, token_id: tokenId, token_hash: tokenHash, now: ctx.now },
  }, ctx)
  return { id, token, tokenId }
}

export const adminRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/organizations', {
    schema: {
      tags: ['admin'],
      summary: 'Create an organization and its first access token (shown once)',
      body: CreateOrganizationBody,
      response: { 201: CreatedOrganization, ...errorResponses },
    },
    preValidation: fieldChecks(checkOrganizationBody),
  }, async (req, reply) => {
    const { id, token, tokenId } = await createOrganization(platform, req.body, commandContext(platform, req))
    const org = await findOrganization(platform.rm, id)
    return reply.code(201).send({ organization: toOrganization(org!), access_token: token, token_id: tokenId })
  })
}
