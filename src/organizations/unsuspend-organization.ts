import { OrganizationEnvelope, OrgIdParams } from '../../schemas/api/organizations.js'
import { errorResponses, ErrorResponse } from '../../schemas/api/common.js'
import { handleCommand } from '../shared/command-handler.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { organizationDeciderOf, requireOrganization, streamOf, type OrganizationEvent, type OrganizationState } from './organization.js'
import { findOrganization, toOrganization } from './queries.js'

/** The admin lifts an organization's suspension. Only a suspended one. */
export interface Unsuspend { type: 'Unsuspend'; data: { now: Date } }

export function decide(command: Unsuspend, state: OrganizationState): OrganizationEvent[] {
  requireOrganization(state)
  return state.suspended ? [{ type: 'OrganizationUnsuspended', data: { unsuspended_at: command.data.now.toISOString() } }] : []
}

export const decider = organizationDeciderOf(decide)

export const unsuspendOrganizationRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/organizations/:org_id/unsuspend', {
    schema: { tags: ['admin'], summary: 'Unsuspend an organization', params: OrgIdParams, response: { 200: OrganizationEnvelope, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => {
    const { org_id } = req.params
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, streamOf(org_id), decider, { type: 'Unsuspend', data: { now: ctx.now } }, ctx)
    return { organization: toOrganization((await findOrganization(platform.rm, org_id))!) }
  })
}
