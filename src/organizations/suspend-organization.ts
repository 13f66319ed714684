import { OrganizationEnvelope, OrgIdParams } from '../../schemas/api/organizations.js'
import { errorResponses, ErrorResponse } from '../../schemas/api/common.js'
import { handleCommand } from '../shared/command-handler.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { organizationDeciderOf, requireOrganization, streamOf, type OrganizationEvent, type OrganizationState } from './organization.js'
import { findOrganization, toOrganization } from './queries.js'

/** The admin suspends an organization: its tokens stop working until it is unsuspended. Once. */
export interface Suspend { type: 'Suspend'; data: { now: Date } }

export function decide(command: Suspend, state: OrganizationState): OrganizationEvent[] {
  requireOrganization(state)
  return state.suspended ? [] : [{ type: 'OrganizationSuspended', data: { suspended_at: command.data.now.toISOString() } }]
}

export const decider = organizationDeciderOf(decide)

export const suspendOrganizationRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/organizations/:org_id/suspend', {
    schema: { tags: ['admin'], summary: 'Suspend an organization', params: OrgIdParams, response: { 200: OrganizationEnvelope, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => {
    const { org_id } = req.params
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, streamOf(org_id), decider, { type: 'Suspend', data: { now: ctx.now } }, ctx)
    return { organization: toOrganization((await findOrganization(platform.rm, org_id))!) }
  })
}
