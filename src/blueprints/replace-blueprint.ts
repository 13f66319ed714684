import { BlueprintEnvelope, BlueprintIdParams, ReplaceBlueprintBody } from '../../schemas/api/blueprints.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import type { RoutesPlugin } from '../http/module.js'
import { blueprintDeciderOf, requireBlueprint, type BlueprintContent, type BlueprintEvent, type BlueprintState } from './blueprint.js'
import { runBlueprintCommand } from './blueprint-command.js'

export interface ReplaceBlueprint {
  type: 'ReplaceBlueprint'
  data: BlueprintContent & { organization_id: string; now: Date }
}

/**
 * A draft is replaced in place; a published version never changes, so replacing it drafts the
 * next version (running workflows keep the version they started with).
 */
export function decide(command: ReplaceBlueprint, state: BlueprintState): BlueprintEvent[] {
  requireBlueprint(state, command.data.organization_id)
  const { name, steps, start_steps, now } = command.data
  const version = state.latestIsDraft ? state.latest : state.latest + 1
  return [{ type: 'BlueprintDrafted', data: { version, name: name.trim(), steps, start_steps, drafted_at: now.toISOString() } }]
}

export const decider = blueprintDeciderOf(decide)

export const replaceBlueprintRoutes: RoutesPlugin = async (app, { platform }) => {
  app.put('/blueprints/:id', {
    schema: {
      tags: ['blueprints'], summary: 'Replace the draft, or draft the next version of a published blueprint',
      params: BlueprintIdParams, body: ReplaceBlueprintBody, response: { 200: BlueprintEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => runBlueprintCommand(platform, req, req.params.id, decider, (organizationId, ctx) => ({
    type: 'ReplaceBlueprint' as const, data: { ...req.body, organization_id: organizationId, now: ctx.now },
  })))
}
