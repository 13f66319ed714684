import { BlueprintBody, BlueprintEnvelope } from '../../schemas/api/blueprints.js'
import { errorResponses } from '../../schemas/api/common.js'
import { IllegalStateError, ValidationError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { blueprintDeciderOf, initialState, type BlueprintContent, type BlueprintEvent, type BlueprintState } from './blueprint.js'
import { appendNewBlueprint, nextBlueprintId } from './new-blueprint.js'
import { ensureDefaultBlueprints } from './default-blueprints.js'
import { readBlueprint } from './queries.js'

export interface CreateBlueprint {
  type: 'CreateBlueprint'
  data: BlueprintContent & { id: number; organization_id: string; key: string; now: Date }
}

/** Version 1, as a draft: publishing is what checks it (a draft may be half-made). */
export function decide(command: CreateBlueprint, state: BlueprintState): BlueprintEvent[] {
  if (state.exists) throw new IllegalStateError('A blueprint with this key exists.', 'blueprint_exists')
  const d = command.data
  return [{
    type: 'BlueprintCreated',
    data: { id: d.id, organization_id: d.organization_id, key: d.key, name: d.name.trim(), default: false, version: 1, steps: d.steps, start_steps: d.start_steps, created_at: d.now.toISOString() },
  }]
}

export const decider = blueprintDeciderOf(decide)

export const createBlueprintRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/blueprints', {
    schema: {
      tags: ['blueprints'], summary: 'Create a blueprint (version 1, a draft)',
      body: BlueprintBody, response: { 201: BlueprintEnvelope, ...errorResponses },
    },
  }, async (req, reply) => {
    const org = organizationOf(req)
    await ensureDefaultBlueprints(platform, org.id)
    const { key, name, steps, start_steps } = req.body
    const id = await nextBlueprintId(platform)
    const ctx = commandContext(platform, req)
    // A new id names a stream that cannot exist yet: decided on the initial state.
    const events = decide({ type: 'CreateBlueprint', data: { id, organization_id: org.id, key, name, steps, start_steps, now: ctx.now } }, initialState())
    if (!(await appendNewBlueprint(platform, org.id, key, id, events, ctx))) {
      throw new ValidationError({ key: [`The organization already has a blueprint with the key "${key}"; PUT /blueprints/{id} makes a new version of it.`] })
    }
    return reply.code(201).send({ success: true, blueprint: (await readBlueprint(platform.rm, org.id, id))! })
  })
}
