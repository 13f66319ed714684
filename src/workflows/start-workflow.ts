import { sql } from 'kysely'
import { CreatedWorkflow, StartWorkflowBody } from '../../schemas/api/workflows.js'
import { errorResponses } from '../../schemas/api/common.js'
import type { Step } from '../../schemas/api/blueprints.js'
import type { AddressSnapshot } from '../../schemas/events/shipments.js'
import type { WorkflowCreated, WorkflowTaskCreated } from '../../schemas/events/workflows.js'
import { ErrorBag, IllegalStateError } from '../shared/errors.js'
import { appendDecided, type CommandContext, type DecidedAppend } from '../shared/command-handler.js'
import { newUlid } from '../shared/ids.js'
import { ConcurrencyError } from '../infrastructure/event-store/event-store.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import { toFieldErrors } from '../http/plugins/validation.js'
import type { RoutesPlugin } from '../http/module.js'
import type { Platform } from '../platform.js'
import { checkAddressInput, resolveAddress } from '../addresses/address-input.js'
import { draftPackage } from '../shared/package-input.js'
import { ensureDefaultBlueprints } from '../blueprints/default-blueprints.js'
import { findBlueprint, findVersion } from '../blueprints/queries.js'
import { initialState, workflowDeciderOf, workflowStream, type WorkflowEvent, type WorkflowState } from './workflow.js'
import { newTaskStream, stepTask } from './workflow-tasks.js'
import { readWorkflow } from './queries.js'
import { stream } from '../../schemas/events/streams.js'
import { WorkflowStartEvents } from '../../schemas/events/workflows.js'
import { isEvent } from '../../schemas/events/event-map.js'

/** The workflow and the tasks of its start steps, prepared (ids, addresses, windows) before deciding. */
export interface StartWorkflow { type: 'StartWorkflow'; data: { created: WorkflowCreated; tasks: WorkflowTaskCreated[] } }

/** A workflow starts once: WorkflowCreated, then a WorkflowTaskCreated for each start step's task. */
export function decide(command: StartWorkflow, state: WorkflowState): WorkflowEvent[] {
  if (state.exists) throw new IllegalStateError('The workflow already exists.', 'workflow_exists')
  return [{ type: 'WorkflowCreated', data: command.data.created }, ...command.data.tasks.map((data) => ({ type: 'WorkflowTaskCreated' as const, data }))]
}

export const decider = workflowDeciderOf(decide)

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

export interface StartWorkflowInput { blueprint_id?: number | undefined; blueprint_key?: string | undefined; data?: Obj | undefined }

/** Stream of a `start_workflow` action's reservation: the key names at most one started workflow. */
export const workflowStartStream = stream.workflowStart

/** The workflow a key's start made, from its reservation stream (undefined: none was made). */
export async function reservedWorkflow(platform: Platform, actionKey: string): Promise<number | undefined> {
  const [reserved] = await platform.store.readStream(workflowStartStream(actionKey))
  return isEvent(WorkflowStartEvents, 'WorkflowStartReserved', reserved) ? reserved.data.workflow_id : undefined
}

/** A shipment's facts given by the caller (its ShipmentCreated) rather than read from the read model. */
export interface GivenShipment {
  origin: AddressSnapshot
  destination: AddressSnapshot
  load: { grams: number; volume_cm3: number; packages: number }
}

interface Prepared { created: Omit<WorkflowCreated, 'workflow_id' | 'created_at' | 'started_by'>; steps: Step[]; startSteps: string[] }

/** A window `{from, to}` with from < to, as UTC ISO strings; the end is named when it is not after the start. */
function windowOf(raw: unknown, path: string, bag: ErrorBag): { from: string; to: string } | null {
  if (!isObj(raw)) return null
  const from = typeof raw.from === 'string' ? Date.parse(raw.from) : NaN
  const to = typeof raw.to === 'string' ? Date.parse(raw.to) : NaN
  if (Number.isNaN(from) || Number.isNaN(to)) return null // the schema names the malformed one
  if (from >= to) { bag.add(`${path}.to`, 'The end of the window must be after its start.'); return null }
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString() }
}

/**
 * Validates a start request (which may have failed schema validation already: each check looks at a
 * field only when it has the right type) and resolves what every task of the workflow will need,
 * so that one 422 names every failing field. Null when anything failed.
 */
async function prepareWorkflow(platform: Platform, organizationId: string, body: unknown, bag: ErrorBag, given?: GivenShipment): Promise<Prepared | null> {
  const b = isObj(body) ? body : {}
  const data = isObj(b.data) ? b.data : {}
  const blueprintField = b.blueprint_id !== undefined ? 'blueprint_id' : 'blueprint_key'
  const ref = typeof b.blueprint_id === 'number' ? b.blueprint_id : typeof b.blueprint_key === 'string' ? b.blueprint_key : null
  if (b.blueprint_id !== undefined && b.blueprint_key !== undefined) bag.add('blueprint_key', 'Send blueprint_id or blueprint_key, not both.')
  else if (b.blueprint_id === undefined && b.blueprint_key === undefined) bag.add('blueprint_id', 'The blueprint_id field is required when blueprint_key is not present.')

  const shipmentId = typeof data.shipment_id === 'number' && Number.isSafeInteger(data.shipment_id) ? data.shipment_id : null
  if (shipmentId !== null) {
    for (const f of ['origin', 'destination', 'packages'] as const) {
      if (data[f] !== undefined) bag.add(`data.${f}`, `The ${f} field is not allowed with shipment_id: it comes from the shipment.`)
    }
  }
  const modes = {
    origin: shipmentId === null ? checkAddressInput(data.origin, 'data.origin', bag) : null,
    destination: shipmentId === null ? checkAddressInput(data.destination, 'data.destination', bag) : null,
  }
  const pickupWindow = windowOf(data.pickup_window, 'data.pickup_window', bag)
  const deliveryWindow = windowOf(data.delivery_window, 'data.delivery_window', bag)
  const org = await platform.rm.selectFrom('organizations').select('currency').where('id', '=', organizationId).executeTakeFirst()
  const packages = shipmentId === null && Array.isArray(data.packages)
    ? data.packages.map((p, i) => draftPackage(p, `data.packages.${i}`, bag, org?.currency ?? 'USD'))
    : []

  await ensureDefaultBlueprints(platform, organizationId)
  const [blueprint, shipment, origin, destination] = await Promise.all([
    ref === null ? Promise.resolve(undefined) : findBlueprint(platform.rm, organizationId, ref),
    shipmentId === null || given ? Promise.resolve(undefined)
      : platform.rm.selectFrom('shipments').select(['id', 'origin_address_id', 'destination_address_id', 'total_grams', 'total_cm3', 'total_packages'])
        .where('id', '=', shipmentId).where('carrier_id', '=', organizationId).executeTakeFirst(),
    modes.origin && isObj(data.origin) ? resolveAddress(platform, organizationId, data.origin, modes.origin, 'data.origin', bag) : Promise.resolve(null),
    modes.destination && isObj(data.destination) ? resolveAddress(platform, organizationId, data.destination, modes.destination, 'data.destination', bag) : Promise.resolve(null),
  ])
  if (ref !== null && !blueprint) bag.add(blueprintField, `The selected ${blueprintField} is not a blueprint of your organization.`)
  else if (blueprint && blueprint.published_version === null) bag.add(blueprintField, 'The blueprint has no published version yet: publish it first.')
  if (shipmentId !== null && !shipment && !given) bag.add('data.shipment_id', 'The selected shipment id is not a shipment your organization carries.')
  const version = blueprint?.published_version ? await findVersion(platform.rm, blueprint.id, blueprint.published_version) : undefined
  if (!blueprint || !version) return null

  // The shipment's own addresses: reused by id (nothing new is made).
  let from: AddressSnapshot | null = given?.origin ?? origin
  let to: AddressSnapshot | null = given?.destination ?? destination
  if (shipment) {
    // They belong to the shipper's organization (it made the shipment): resolved as its addresses.
    const scratch = new ErrorBag()
    const owners = await platform.rm.selectFrom('addresses').select(['id', 'organization_id'])
      .where('id', 'in', [shipment.origin_address_id, shipment.destination_address_id]).execute()
    const ownerOf = (id: string) => owners.find((o) => o.id === id)?.organization_id ?? organizationId
    ;[from, to] = await Promise.all([
      resolveAddress(platform, ownerOf(shipment.origin_address_id), { id: shipment.origin_address_id }, 'id', 'data.shipment_id', scratch),
      resolveAddress(platform, ownerOf(shipment.destination_address_id), { id: shipment.destination_address_id }, 'id', 'data.shipment_id', scratch),
    ])
    if (!from || !to) bag.add('data.shipment_id', 'The shipment\'s addresses could not be read.')
  }
  // Every address a step of this version will use must be there now: a retry days later cannot ask.
  const steps = version.steps ?? []
  const needs = new Set(steps.map((s) => s.task.address).filter((a): a is 'origin' | 'destination' => typeof a === 'string'))
  for (const which of needs) {
    if (shipmentId === null && data[which] === undefined) bag.add(`data.${which}`, `The ${which} field is required: a step of the blueprint takes its address from it.`)
  }
  const stepAddresses: Record<string, AddressSnapshot> = {}
  for (const [i, s] of steps.entries()) {
    if (!isObj(s.task.address)) continue
    const path = `${blueprintField}.steps.${i}.task.address`
    const mode = checkAddressInput(s.task.address, path, bag)
    const snap = mode ? await resolveAddress(platform, organizationId, s.task.address, mode, path, bag) : null
    if (snap) stepAddresses[s.key] = snap
  }
  if (!bag.empty) return null

  const drafts = packages.filter((p) => p !== null)
  const load = given ? given.load
    : shipment
    ? { grams: Number(shipment.total_grams), volume_cm3: Number(shipment.total_cm3), packages: Number(shipment.total_packages) }
    : {
        grams: drafts.reduce((n, p) => n + Math.round(p.weight.value), 0),
        volume_cm3: drafts.reduce((n, p) => n + Math.round(p.length.value * p.width.value * p.height.value), 0),
        packages: drafts.length,
      }
  const notes = typeof data.notes === 'string' && data.notes.trim() !== '' ? data.notes.trim() : null
  return {
    created: {
      organization_id: organizationId,
      blueprint: { id: blueprint.id, key: blueprint.key, version: version.version },
      data, shipment_id: shipmentId, origin: from, destination: to, pickup_window: pickupWindow, delivery_window: deliveryWindow,
      load, step_addresses: stepAddresses, notes,
    },
    steps, startSteps: version.start_steps ?? [],
  }
}

export const nextWorkflowId = async (platform: Platform): Promise<number> =>
  (await sql<{ id: number }>`select nextval('workflow_id_seq')::int as id`.execute(platform.db)).rows[0]!.id

/**
 * The workflow and the tasks of its start steps in ONE atomic write (its stream and each task's),
 * so a workflow never exists without them. `startedBy` (a `start_workflow` action's key) adds that
 * key's reservation to the same write: a second run of the action finds it and makes nothing.
 * Returns the workflow's id (the existing one for a reserved key).
 */
async function appendWorkflow(platform: Platform, prepared: Prepared, ctx: CommandContext, startedBy: string | null): Promise<number> {
  const id = await nextWorkflowId(platform)
  const at = ctx.now.toISOString()
  const created: WorkflowCreated = { ...prepared.created, workflow_id: id, started_by: startedBy, created_at: at }
  const tasks: WorkflowTaskCreated[] = []
  const taskAppends: DecidedAppend[] = []
  const byStep = new Map<string, string>()
  for (const key of prepared.startSteps) {
    const step = prepared.steps.find((s) => s.key === key)
    if (!step) continue
    const ulid = newUlid()
    const deps = (step.depends_on ?? []).flatMap((d) => (byStep.has(d) ? [byStep.get(d)!] : []))
    const task = stepTask(created, step, ulid, deps, ctx.now)
    if (!task) continue
    byStep.set(key, ulid)
    tasks.push({ workflow_id: id, organization_id: created.organization_id, ulid, step_key: key, attempt: 1, action_key: null, retry: false, created_at: at })
    taskAppends.push(newTaskStream(task))
  }
  const events = decide({ type: 'StartWorkflow', data: { created, tasks } }, initialState())
  const appends: DecidedAppend[] = [{ streamId: workflowStream(id), events, expected: 'no_stream' }, ...taskAppends]
  const reservation = startedBy ? workflowStartStream(startedBy) : null
  if (startedBy && reservation) {
    appends.unshift({ streamId: reservation, events: [{ type: 'WorkflowStartReserved', data: { action_key: startedBy, workflow_id: id } }], expected: 'no_stream' })
  }
  try {
    await appendDecided(platform.commands, appends, ctx)
    return id
  } catch (err) {
    if (!(reservation && err instanceof ConcurrencyError && err.streamId === reservation)) throw err
    const [reserved] = await platform.store.readStream(reservation)
    if (!isEvent(WorkflowStartEvents, 'WorkflowStartReserved', reserved)) throw err
    return reserved.data.workflow_id
  }
}

/**
 * Starts a workflow for an organization (a 422 naming every failing field otherwise): the entry
 * point for other modules (shipments of `service_routes` carriers, the `start_workflow` action).
 */
export async function startWorkflow(
  platform: Platform, organizationId: string, input: StartWorkflowInput, ctx: CommandContext,
  opts: { startedBy?: string; /** The shipment's facts from its event (a reaction), instead of its read-model row. */ shipment?: GivenShipment } = {},
): Promise<number> {
  const bag = new ErrorBag()
  const prepared = await prepareWorkflow(platform, organizationId, input, bag, opts.shipment)
  bag.throwIfAny()
  if (!prepared) throw new Error('workflow preparation failed without errors')
  return appendWorkflow(platform, prepared, ctx, opts.startedBy ?? null)
}

export const startWorkflowRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/workflows', {
    attachValidation: true,
    schema: {
      tags: ['workflows'], summary: 'Start a workflow from a published blueprint (by id or key); the tasks of its start steps are created at once',
      body: StartWorkflowBody, response: { 201: CreatedWorkflow, ...errorResponses },
    },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const bag = new ErrorBag()
    if (req.validationError) bag.merge('', toFieldErrors(req.validationError.validation ?? [], 'body'))
    const prepared = await prepareWorkflow(platform, org.id, req.body, bag)
    bag.throwIfAny()
    if (!prepared) throw new Error('workflow preparation failed without errors')
    const id = await appendWorkflow(platform, prepared, commandContext(platform, req), null)
    const workflow = await readWorkflow(platform.rm, org.id, id)
    return reply.code(201).send({ success: true, workflow: { data: workflow! } })
  })
}
