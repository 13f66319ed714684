import { CreateTaskBody, TaskEnvelope } from '../../schemas/api/tasks.js'
import { errorResponses } from '../../schemas/api/common.js'
import type { Requirement, TaskCreated, TaskType } from '../../schemas/events/tasks.js'
import { ErrorBag, IllegalStateError } from '../shared/errors.js'
import { appendDecided, type CommandContext, type DecidedAppend } from '../shared/command-handler.js'
import { newUlid } from '../shared/ids.js'
import { callerOf, type Caller } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import { toFieldErrors } from '../http/plugins/validation.js'
import type { RoutesPlugin } from '../http/module.js'
import type { Platform } from '../platform.js'
import { checkAddressInput, resolveAddress } from '../addresses/address-input.js'
import { initialState, taskDeciderOf, taskStream, type TaskEvent, type TaskState } from './task.js'
import { activeUser, carriedShipment, existingTasks, findTask, toTask } from './queries.js'
import { taskViewerOf } from './visibility.js'

export type CreateTask = { type: 'CreateTask'; data: TaskCreated }

export function decide(command: CreateTask, state: TaskState): TaskEvent[] {
  if (state.exists) throw new IllegalStateError('The task already exists.', 'task_exists')
  return [{ type: 'TaskCreated', data: command.data }]
}

export const decider = taskDeciderOf(decide)

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null)
const TYPES: readonly string[] = ['pickup', 'delivery', 'inspection', 'return', 'service']
const isTaskType = (v: unknown): v is TaskType => typeof v === 'string' && TYPES.includes(v)
const REQUIREMENTS: readonly string[] = ['signature', 'photo', 'barcode_scan', 'notes']
const LOCATION_KEYS = ['id', 'place_id', 'city', 'city_id', 'state', 'state_id', 'country', 'country_id']

/** Time windows: each from < to, sorted, none overlapping the one before; the failing end is named. */
function checkTimeWindows(raw: unknown, bag: ErrorBag): { from: string; to: string }[] {
  if (!Array.isArray(raw)) return []
  const out: { from: string; to: string }[] = []
  let previousTo: number | null = null
  raw.forEach((w, i) => {
    if (!isObj(w)) return
    const from = typeof w.from === 'string' ? Date.parse(w.from) : NaN
    const to = typeof w.to === 'string' ? Date.parse(w.to) : NaN
    if (Number.isNaN(from) || Number.isNaN(to)) return // the schema names the malformed one
    if (from >= to) bag.add(`time_windows.${i}.to`, 'The end of a time window must be after its start.')
    if (previousTo !== null && from < previousTo) bag.add(`time_windows.${i}.from`, 'Time windows must be sorted and may not overlap: this one starts before the previous one ends.')
    previousTo = Math.max(previousTo ?? to, to)
    out.push({ from: new Date(from).toISOString(), to: new Date(to).toISOString() })
  })
  return out
}

const requirementList = (v: unknown): Requirement[] =>
  Array.isArray(v) ? [...new Set(v.filter((r): r is Requirement => typeof r === 'string' && REQUIREMENTS.includes(r)))] : []

export type PreparedTask = Omit<TaskCreated, 'ulid' | 'organization_id' | 'created_at'>

/**
 * Validates and resolves a creation request. The input may have failed schema validation already
 * (the route put those errors in `bag`): every check here looks at a field only when it has the right
 * type, and adds the lookup errors (address, shipment, dependencies, assignee) so one 422 names all.
 */
export async function prepareTask(platform: Platform, organizationId: string, body: unknown, bag: ErrorBag): Promise<PreparedTask | null> {
  if (!isObj(body)) {
    if (bag.empty) bag.add('body', 'The body must be a JSON object.')
    return null
  }
  const mode = checkAddressInput(body.address, 'address', bag)
  const hasLocationError = LOCATION_KEYS.some((k) => bag.errors[`address.${k}`])
  const timeWindows = checkTimeWindows(body.time_windows, bag)
  const dependencies = Array.isArray(body.dependencies) ? body.dependencies.map((d) => (typeof d === 'string' ? d.toUpperCase() : '')) : []
  dependencies.forEach((d, i) => { if (d && dependencies.indexOf(d) !== i) bag.add(`dependencies.${i}`, 'The dependency appears more than once.') })
  const shipmentId = typeof body.shipment_id === 'number' && Number.isSafeInteger(body.shipment_id) ? body.shipment_id : null
  const assigneeId = str(body.assignee_id)

  // The lookups are independent of each other: one round trip of latency for all of them.
  const [address, shipment, existing, assignee] = await Promise.all([
    mode && isObj(body.address) && !hasLocationError ? resolveAddress(platform, organizationId, body.address, mode, 'address', bag) : Promise.resolve(null),
    shipmentId === null ? Promise.resolve(undefined) : carriedShipment(platform.rm, organizationId, shipmentId),
    existingTasks(platform.rm, organizationId, dependencies.filter(Boolean)),
    assigneeId === null ? Promise.resolve(undefined) : activeUser(platform.rm, organizationId, assigneeId),
  ])
  if (shipmentId !== null && !shipment) bag.add('shipment_id', 'The selected shipment id is not a shipment your organization carries.')
  dependencies.forEach((d, i) => { if (d && !existing.has(d)) bag.add(`dependencies.${i}`, 'The selected dependency is not a task of your organization.') })
  if (assigneeId !== null && !assignee) bag.add('assignee_id', 'The selected assignee id is not an active user of your organization.')
  if (!bag.empty || !address || !isTaskType(body.type)) return null

  const requirements = isObj(body.requirements) ? body.requirements : {}
  const load = isObj(body.load)
    ? { grams: Number(body.load.grams ?? 0), volume_cm3: Number(body.load.volume_cm3 ?? 0), packages: Number(body.load.packages ?? 0) }
    : shipment
      ? { grams: Number(shipment.total_grams), volume_cm3: Number(shipment.total_cm3), packages: Number(shipment.total_packages) }
      : { grams: 0, volume_cm3: 0, packages: 0 }
  return {
    type: body.type,
    address,
    shipment_id: shipmentId,
    workflow_id: null,
    step_key: null,
    assignee_id: assignee?.id ?? null,
    time_windows: timeWindows,
    duration_minutes: typeof body.duration_minutes === 'number' ? body.duration_minutes : null,
    dependencies,
    requirements: { complete: requirementList(requirements.complete), fail: requirementList(requirements.fail) },
    load,
    notes: str(body.notes),
    external_reference: str(body.external_reference),
  }
}

/**
 * Appends the task's creation; returns the payload once the read models have it. A fresh ulid names
 * a stream that cannot exist yet: decided on the initial state and appended with `no_stream`
 * (the store still refuses a second creation), without reading the stream first.
 */
export async function appendTask(platform: Platform, organizationId: string, prepared: PreparedTask, ctx: CommandContext, extra: Partial<Pick<TaskCreated, 'workflow_id' | 'step_key'>> = {}): Promise<TaskCreated> {
  const data: TaskCreated = { ulid: newUlid(), organization_id: organizationId, ...prepared, ...extra, created_at: ctx.now.toISOString() }
  await appendDecided(platform.commands, [newTask(data)], ctx)
  return data
}

/**
 * A new task's stream, decided by this slice. A workflow writes its steps' tasks beside its own
 * record of them, in one append, under the same rule (workflows/workflow-tasks.ts `newTaskStream`).
 */
function newTask(data: TaskCreated): DecidedAppend<TaskEvent> {
  return { streamId: taskStream(data.ulid), events: decide({ type: 'CreateTask', data }, initialState()), expected: 'no_stream' }
}

/**
 * Validates and creates one task for the caller's organization (a 422 naming every failing field
 * otherwise).
 */
export async function createTask(
  platform: Platform, caller: { organization: Pick<Caller['organization'], 'id'> }, input: CreateTaskBody, ctx: CommandContext,
  extra: Partial<Pick<TaskCreated, 'workflow_id' | 'step_key'>> = {},
): Promise<TaskCreated> {
  const bag = new ErrorBag()
  const prepared = await prepareTask(platform, caller.organization.id, input, bag)
  bag.throwIfAny()
  if (!prepared) throw new Error('task preparation failed without errors')
  return appendTask(platform, caller.organization.id, prepared, ctx, extra)
}

export const createTaskRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/tasks', {
    attachValidation: true,
    schema: {
      tags: ['tasks'], summary: 'Create a task (an address in any AddressInput mode, optionally linked to a shipment you carry)',
      body: CreateTaskBody, response: { 201: TaskEnvelope, ...errorResponses },
    },
  }, async (req, reply) => {
    const caller = callerOf(req)
    const bag = new ErrorBag()
    if (req.validationError) bag.merge('', toFieldErrors(req.validationError.validation ?? [], 'body'))
    const prepared = await prepareTask(platform, caller.organization.id, req.body, bag)
    bag.throwIfAny()
    if (!prepared) throw new Error('task preparation failed without errors')
    const data = await appendTask(platform, caller.organization.id, prepared, commandContext(platform, req))
    const row = await findTask(platform.rm, taskViewerOf(req), data.ulid)
    return reply.code(201).send({ success: true, task: toTask(row!) })
  })
}
