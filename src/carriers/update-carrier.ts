import { CarrierEnvelope, CarrierIdParams, UpdateCarrierBody, UpdateMeBody, type UpdateCarrierBody as Body } from '../../schemas/api/carriers.js'
import type { CarrierUpdated } from '../../schemas/events/carriers.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import type { Decider } from '../shared/decider.js'
import { ErrorBag, NotFoundError } from '../shared/errors.js'
import { handleCommand, type CommandContext } from '../shared/command-handler.js'
import { carrierIdOf, organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import type { Platform } from '../platform.js'
import { carrierStream, certificationFor, evolve, initialState, type CarrierEvent, type CarrierState } from './carrier.js'
import { checkCallbackUrls } from './callback-urls.js'
import { requireCarriersEnabled } from './carriers-enabled.js'
import { carrierView, findCarrierRow, ownedCarrier } from './queries.js'

export interface UpdateCarrier {
  type: 'UpdateCarrier'
  /** Only the fields present change; the caller passes the stored row so unchanged fields emit nothing. */
  data: { changes: Body; current: Record<string, unknown>; now: Date }
}

export function decide(command: UpdateCarrier, state: CarrierState): CarrierEvent[] {
  if (!state.exists) throw new NotFoundError('Carrier')
  const { changes, current } = command.data
  const diff: Partial<CarrierUpdated> = {}
  for (const [k, v] of Object.entries(changes) as [keyof Body, unknown][]) {
    if (v === undefined) continue
    const value = k === 'name' ? String(v).trim() : v
    if (current[k] !== value) (diff as Record<string, unknown>)[k] = value
  }
  if (diff.visibility) {
    const next = certificationFor(diff.visibility, state.certification)
    if (next !== state.certification) diff.certification_status = next
  }
  if (Object.keys(diff).length === 0) return []
  return [{ type: 'CarrierUpdated', data: { ...diff, updated_at: command.data.now.toISOString() } }]
}

export const decider: Decider<CarrierState, UpdateCarrier, CarrierEvent> = { decide, evolve, initialState }

/** Validates the URLs, then applies the changes to the carrier stream. */
export async function updateCarrier(platform: Platform, carrierId: string, changes: Body, ctx: CommandContext): Promise<void> {
  const row = await findCarrierRow(platform.rm, carrierId)
  if (!row) throw new NotFoundError('Carrier')
  const errors = new ErrorBag()
  await checkCallbackUrls(platform, changes, errors, row)
  errors.throwIfAny()
  await handleCommand(platform.commands, carrierStream(carrierId), decider, {
    type: 'UpdateCarrier', data: { changes, current: row, now: ctx.now },
  }, ctx)
}

/** Hub: update one of the organization's carriers. */
export const updateCarrierRoutes: RoutesPlugin = async (app, { platform }) => {
  app.patch('/carriers/:id', {
    schema: { tags: ['carrier hub'], summary: 'Update a carrier', params: CarrierIdParams, body: UpdateCarrierBody, response: { 200: CarrierEnvelope, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => {
    const org = organizationOf(req)
    requireCarriersEnabled(org)
    const { id } = req.params
    await ownedCarrier(platform.rm, org.id, id)
    await updateCarrier(platform, id, req.body, commandContext(platform, req))
    return { carrier: await carrierView(platform.rm, id) }
  })
}

/** Carrier API: `PATCH /me` changes URLs and quote mode. */
export const updateMeRoutes: RoutesPlugin = async (app, { platform }) => {
  app.patch('/me', {
    schema: { tags: ['carrier API'], summary: 'Change notification URL, quote URL or quote mode', body: UpdateMeBody, response: { 200: CarrierEnvelope, ...errorResponses } },
  }, async (req) => {
    const id = carrierIdOf(req)
    await updateCarrier(platform, id, req.body, commandContext(platform, req))
    return { carrier: await carrierView(platform.rm, id) }
  })
}
