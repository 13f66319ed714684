import { OrganizationSettingsEnvelope, UpdateOrganizationSettingsBody, type UpdateOrganizationSettingsBody as Body } from '../../schemas/api/organizations.js'
import { errorResponses } from '../../schemas/api/common.js'
import { handleCommand } from '../shared/command-handler.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { organizationOf } from '../http/plugins/auth.js'
import { fieldChecks, type FieldCheck } from '../http/plugins/validation.js'
import { organizationDeciderOf, requireOrganization, streamOf, type OrganizationEvent, type OrganizationState } from './organization.js'
import { organizationSettings } from './settings.js'
import { isTimeZone } from './country-time-zone.js'

/** The organization changes its display settings (issue 37): only the fields sent change. */
export interface UpdateSettings { type: 'UpdateSettings'; data: Body & { now: Date } }

export function decide(command: UpdateSettings, state: OrganizationState): OrganizationEvent[] {
  requireOrganization(state)
  const { now, ...d } = command.data
  return [{
    type: 'OrganizationSettingsChanged',
    data: {
      ...(d.time_zone !== undefined ? { time_zone: d.time_zone } : {}),
      ...(d.delivery_attempt_messages !== undefined ? { delivery_attempt_messages: { ...d.delivery_attempt_messages } } : {}),
      ...(d.public_proof_photos !== undefined ? { public_proof_photos: d.public_proof_photos } : {}),
      changed_at: now.toISOString(),
    },
  }]
}

export const decider = organizationDeciderOf(decide)

const checkSettings: FieldCheck = (body, errors) => {
  if (typeof body.time_zone === 'string' && !isTimeZone(body.time_zone)) errors.add('time_zone', 'The time zone must be an IANA time zone name, e.g. Europe/Madrid.')
}

export const updateSettingsRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/organizations/my/settings', {
    schema: {
      tags: ['organizations'], summary: 'The organization\'s display settings: time zone (set or from its country), failed-attempt texts, public proof photos',
      response: { 200: OrganizationSettingsEnvelope, ...errorResponses },
    },
  }, async (req) => ({ settings: await organizationSettings(platform.rm, organizationOf(req).id) }))

  app.patch('/organizations/my/settings', {
    schema: {
      tags: ['organizations'], summary: 'Change the organization\'s display settings: time zone, failed-attempt texts, public proof photos',
      body: UpdateOrganizationSettingsBody, response: { 200: OrganizationSettingsEnvelope, ...errorResponses },
    },
    preValidation: fieldChecks(checkSettings),
  }, async (req) => {
    const org = organizationOf(req)
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, streamOf(org.id), decider, { type: 'UpdateSettings', data: { ...req.body, now: ctx.now } }, ctx)
    return { settings: await organizationSettings(platform.rm, org.id) }
  })
}
