import { Type, type Static } from 'typebox'
import { ListingCursor, Nullable, Page, pageQuery } from './common.js'
import { AddressInput } from './shipments.js'
import { RequirementsInput } from './tasks.js'
import { TaskType } from '../events/tasks.js'

// DESIGN §3.9 "Blueprints": a published, versioned recipe of steps; each step makes one task and
// says what happens when it completes or fails.

const Key = Type.String({ minLength: 1, maxLength: 50, pattern: '^[a-z0-9][a-z0-9_-]*$', description: 'lower-case letters, digits, _ and -' })
export const StepTask = Type.Object({
  type: TaskType,
  address: Type.Union([Type.Literal('origin'), Type.Literal('destination'), AddressInput], { description: '"origin" or "destination" of the workflow\'s data, or a fixed address' }),
  duration_minutes: Type.Optional(Type.Integer({ minimum: 0, maximum: 24 * 60 })),
  time_window: Type.Optional(Type.Union([Type.Literal('pickup_window'), Type.Literal('delivery_window')])),
}, { title: 'StepTask', additionalProperties: false })

const closed = { additionalProperties: false } as const
const EventName = Type.String({ minLength: 1, maxLength: 60, pattern: '^[a-z0-9][a-z0-9_.-]*$', description: 'sent to the organization webhooks as custom.<event>' })

/** What a step's outcome sets off; run by the process manager (src/processes), each exactly once. */
const ActionUnion = Type.Union([
  Type.Object({ do: Type.Literal('create_task'), step: Key }, { ...closed, title: 'CreateTaskAction' }),
  Type.Object({ do: Type.Literal('cancel_remaining_tasks') }, { ...closed, title: 'CancelRemainingTasksAction' }),
  Type.Object({ do: Type.Literal('emit_event'), event: EventName }, { ...closed, title: 'EmitEventAction' }),
  Type.Object({ do: Type.Literal('start_workflow'), blueprint_key: Key }, { ...closed, title: 'StartWorkflowAction' }),
  Type.Object({ do: Type.Literal('set_shipment_status'), status: Type.String({ minLength: 1, maxLength: 50 }), substatus: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })) }, { ...closed, title: 'SetShipmentStatusAction' }),
  Type.Object({
    do: Type.Literal('retry'),
    max_attempts: Type.Optional(Type.Integer({ minimum: 1, description: 'attempts of the step in all, at most 10; required to publish' })),
  }, { ...closed, title: 'RetryAction', description: 'while attempts remain: the same step again as a new task, and the rest of the list is skipped; once spent, the list goes on' }),
  Type.Object({ do: Type.Literal('complete_workflow') }, { ...closed, title: 'CompleteWorkflowAction' }),
  Type.Object({ do: Type.Literal('fail_workflow') }, { ...closed, title: 'FailWorkflowAction' }),
])
export type Action = Static<typeof ActionUnion>

const ACTIONS = ActionUnion.anyOf.map((a) => a.properties.do.const)
/**
 * The same branches, told apart by `do` (Ajv's discriminator): a bad action is reported against
 * its own branch only (`…on_fail.0.step` is required), not against all eight.
 */
export const Action = Type.Unsafe<Action>({
  title: 'BlueprintAction', type: 'object', required: ['do'], discriminator: { propertyName: 'do' }, oneOf: ActionUnion.anyOf,
  description: `one of: ${ACTIONS.join(', ')}`,
})

export const Step = Type.Object({
  key: Key,
  name: Type.String({ minLength: 1, maxLength: 100 }),
  task: StepTask,
  depends_on: Type.Optional(Type.Array(Key, { maxItems: 50 })),
  requirements: Type.Optional(RequirementsInput),
  on_complete: Type.Optional(Type.Array(Action, { maxItems: 20 })),
  on_fail: Type.Optional(Type.Array(Action, { maxItems: 20 })),
}, { title: 'BlueprintStep', additionalProperties: false })
export type Step = Static<typeof Step>

export const BlueprintBody = Type.Object({
  key: Key,
  name: Type.String({ minLength: 1, maxLength: 100 }),
  steps: Type.Array(Step, { minItems: 1, maxItems: 50 }),
  start_steps: Type.Array(Key, { minItems: 1, maxItems: 50 }),
}, { title: 'CreateBlueprintRequest', additionalProperties: false })
export type BlueprintBody = Static<typeof BlueprintBody>

/** A replacement: the key stays (it is how workflows and `start_workflow` name the blueprint). */
export const ReplaceBlueprintBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  steps: Type.Array(Step, { minItems: 1, maxItems: 50 }),
  start_steps: Type.Array(Key, { minItems: 1, maxItems: 50 }),
}, { title: 'ReplaceBlueprintRequest', additionalProperties: false })
export type ReplaceBlueprintBody = Static<typeof ReplaceBlueprintBody>

export const BlueprintStatus = Type.Union([Type.Literal('draft'), Type.Literal('published')], { title: 'BlueprintStatus' })

export const Blueprint = Type.Object({
  id: Type.Integer(),
  key: Type.String(),
  name: Type.String(),
  version: Type.Integer({ description: 'the latest version' }),
  status: BlueprintStatus,
  published_version: Nullable(Type.Integer({ description: 'the version new workflows start with' })),
  default: Type.Boolean({ description: 'one of the two blueprints every organization starts with' }),
  steps: Type.Array(Step),
  start_steps: Type.Array(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  published_at: Nullable(Type.String({ format: 'date-time' })),
}, { title: 'Blueprint' })
export type Blueprint = Static<typeof Blueprint>

export const BlueprintIdParams = Type.Object({ id: Type.String({ maxLength: 64, description: 'the blueprint\'s id, or its key' }) })
export const BlueprintQuery = Type.Object({
  version: Type.Optional(Type.Integer({ minimum: 1, description: 'an earlier version instead of the latest' })),
}, { additionalProperties: false })
export const BlueprintsQuery = Type.Object({
  status: Type.Optional(BlueprintStatus),
  key: Type.Optional(Type.String({ maxLength: 50 })),
  ...pageQuery(),
  cursor: ListingCursor,
}, { additionalProperties: false })

export const BlueprintEnvelope = Type.Object({ success: Type.Boolean(), blueprint: Blueprint }, { title: 'BlueprintEnvelope' })
export const BlueprintsPage = Page(Blueprint, 'BlueprintsPage')
