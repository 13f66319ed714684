import { BlueprintEnvelope, BlueprintIdParams } from '../../schemas/api/blueprints.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { IllegalStateError } from '../shared/errors.js'
import type { RoutesPlugin } from '../http/module.js'
import { blueprintDeciderOf, requireBlueprint, type BlueprintEvent, type BlueprintState } from './blueprint.js'
import { validateBlueprint } from './validate-blueprint.js'
import { blueprintKeys } from './queries.js'
import { runBlueprintCommand } from './blueprint-command.js'

export interface PublishBlueprint {
  type: 'PublishBlueprint'
  /** The organization's other blueprint keys, for `start_workflow` actions. */
  data: { organization_id: string; other_keys: ReadonlySet<string>; now: Date }
}

/** Checks the draft (422 naming every problem) and freezes it. */
export function decide(command: PublishBlueprint, state: BlueprintState): BlueprintEvent[] {
  requireBlueprint(state, command.data.organization_id)
  if (!state.latestIsDraft || !state.draft) throw new IllegalStateError(`Version ${state.latest} is already published; PUT makes the next version.`, 'blueprint_published')
  validateBlueprint(state.key, state.draft, command.data.other_keys).throwIfAny()
  return [{ type: 'BlueprintPublished', data: { version: state.latest, published_at: command.data.now.toISOString() } }]
}

export const decider = blueprintDeciderOf(decide)

export const publishBlueprintRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/blueprints/:id/publish', {
    schema: {
      tags: ['blueprints'], summary: 'Check the draft and publish it: new workflows start with this version',
      params: BlueprintIdParams, response: { 200: BlueprintEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => runBlueprintCommand(platform, req, req.params.id, decider, async (organizationId, ctx) => ({
    type: 'PublishBlueprint' as const, data: { organization_id: organizationId, other_keys: await blueprintKeys(platform.rm, organizationId), now: ctx.now },
  })))
}
