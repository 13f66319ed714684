import { blueprintDeciderOf, type BlueprintContent, type BlueprintEvent, type BlueprintState } from './blueprint.js'

/**
 * One of the blueprints every organization starts with (default-blueprints.ts lists them and makes
 * the missing ones on first use). No HTTP route.
 */
export interface CreateDefaultBlueprint {
  type: 'CreateDefaultBlueprint'
  data: BlueprintContent & { id: number; organization_id: string; key: string; now: Date }
}

/** Created and published at once; made again (another process got there first), nothing happens. */
export function decide(command: CreateDefaultBlueprint, state: BlueprintState): BlueprintEvent[] {
  if (state.exists) return []
  const d = command.data
  const at = d.now.toISOString()
  return [
    { type: 'BlueprintCreated', data: { id: d.id, organization_id: d.organization_id, key: d.key, name: d.name, default: true, version: 1, steps: d.steps, start_steps: d.start_steps, created_at: at } },
    { type: 'BlueprintPublished', data: { version: 1, published_at: at } },
  ]
}

export const decider = blueprintDeciderOf(decide)
