import type { Step } from '../../schemas/api/blueprints.js'
import type { Platform } from '../platform.js'
import { initialState, type BlueprintContent } from './blueprint.js'
import { appendNewBlueprint, nextBlueprintId } from './new-blueprint.js'
import { decide } from './create-default-blueprint.js'

const delivery = (extra: Partial<Step> = {}): Step => ({
  key: 'delivery', name: 'Delivery',
  task: { type: 'delivery', address: 'destination', time_window: 'delivery_window' },
  on_complete: [{ do: 'set_shipment_status', status: 'delivered' }, { do: 'complete_workflow' }],
  // Two more attempts after the first; once spent, the list goes on to the last failure.
  on_fail: [
    { do: 'set_shipment_status', status: 'attempted_delivery' },
    { do: 'retry', max_attempts: 3 },
    { do: 'set_shipment_status', status: 'not_delivered' },
    { do: 'fail_workflow' },
  ],
  ...extra,
})

/** The two blueprints every organization starts with (DESIGN §3.9), published as version 1. */
export const DEFAULT_BLUEPRINTS: ReadonlyArray<{ key: string } & BlueprintContent> = [
  { key: 'delivery', name: 'Delivery', steps: [delivery()], start_steps: ['delivery'] },
  {
    key: 'pickup-delivery', name: 'Pickup, then delivery',
    steps: [
      {
        key: 'pickup', name: 'Pickup',
        task: { type: 'pickup', address: 'origin', time_window: 'pickup_window' },
        on_complete: [{ do: 'set_shipment_status', status: 'picked_up' }, { do: 'create_task', step: 'delivery' }],
        on_fail: [{ do: 'retry', max_attempts: 3 }, { do: 'cancel_remaining_tasks' }, { do: 'fail_workflow' }],
      },
      delivery({ depends_on: ['pickup'] }),
    ],
    start_steps: ['pickup'],
  },
]

// Organizations this process has seen with both defaults: the check costs one query once per organization.
const ensured = new WeakMap<Platform, Set<string>>()

/**
 * Makes the organization's default blueprints if they are missing: organizations created before
 * blueprints existed get them on first use, as new ones do. Processes racing here make each once:
 * the key's reservation stream decides (the loser's id is left unused).
 */
export async function ensureDefaultBlueprints(platform: Platform, organizationId: string): Promise<void> {
  let done = ensured.get(platform)
  if (!done) ensured.set(platform, (done = new Set()))
  if (done.has(organizationId)) return
  const keys = DEFAULT_BLUEPRINTS.map((b) => b.key)
  const present = new Set((await platform.rm.selectFrom('blueprints').select('key').where('organization_id', '=', organizationId).where('key', 'in', keys).execute()).map((r) => r.key))
  for (const b of DEFAULT_BLUEPRINTS) {
    if (present.has(b.key)) continue
    const now = platform.clock()
    const id = await nextBlueprintId(platform)
    const events = decide({ type: 'CreateDefaultBlueprint', data: { ...b, id, organization_id: organizationId, now } }, initialState())
    await appendNewBlueprint(platform, organizationId, b.key, id, events, { now, actor: { kind: 'system', id: 'default-blueprints' } })
  }
  done.add(organizationId)
}
