import type { FastifyRequest } from 'fastify'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { TaskEnvelope } from '../../schemas/api/tasks.js'
import type { Task } from '../../schemas/api/tasks.js'
import { NotFoundError } from '../shared/errors.js'
import { handleCommandFromRow, type CommandContext } from '../shared/command-handler.js'
import type { Decider } from '../shared/decider.js'
import { commandContext } from '../http/command-context.js'
import type { Platform } from '../platform.js'
import { dependenciesOf, findTask, labelCodes, pendingDependencies, rowAfter, stateFromRow, toTask, type TaskRow } from './queries.js'
import { taskStream, type Proof, type TaskEvent, type TaskState } from './task.js'
import { taskViewerOf } from './visibility.js'

/** Responses of a task transition: 200 `{success, task}`, 404 for a task the caller may not see. */
export const transitionResponses = { 200: TaskEnvelope, 404: ErrorResponse, ...errorResponses }

/** Transitions are open to drivers (on the tasks they may see: visibility.ts). */
export const driversToo = { drivers: true } as const

/**
 * Runs a transition on a task the caller may see (a 404 otherwise): the command is built from the
 * context and the task's row (for look-ups its decide needs, like dependencies and label codes),
 * then decided on the row's state through the row fast path (`handleCommandFromRow`). When the row
 * decided, the answer is the row folded forward by the projection's own `changesOf` (`rowAfter`):
 * no stream read, no read back; when the stream did, the row is read again.
 */
export async function runTaskCommand<C>(
  platform: Platform, req: FastifyRequest, ulid: string, decider: Decider<TaskState, C, TaskEvent>,
  build: (ctx: CommandContext, organizationId: string, row: TaskRow) => C | Promise<C>,
): Promise<{ success: true; task: Task }> {
  const viewer = taskViewerOf(req)
  const row = await findTask(platform.rm, viewer, ulid)
  if (!row) throw new NotFoundError('Task')
  const ctx = commandContext(platform, req)
  const command = await build(ctx, viewer.organizationId, row)
  const result = await handleCommandFromRow(platform.commands, {
    streamId: taskStream(row.ulid), decider, command: () => command, row: { state: stateFromRow(row), version: row.stream_version },
  }, ctx)
  if (result.from === 'row') return { success: true, task: toTask(rowAfter(row, result.events)) }
  return { success: true, task: toTask((await findTask(platform.rm, viewer, row.ulid))!) }
}

const text = (v: string | null | undefined) => v?.trim() || null

/**
 * What a complete or a fail brings (trimmed, attachment ids once each), with the look-ups its
 * decision needs: the dependencies still open (for a task taken straight from pending) and the
 * label codes a scanned barcode must match.
 */
export async function proofOf(
  platform: Platform, organizationId: string, row: TaskRow,
  body: { signed_by?: string | null | undefined; notes?: string | null | undefined; barcode?: string | null | undefined; attachment_ids?: string[] | undefined },
): Promise<Proof & { pending_dependencies: string[] }> {
  const barcode = text(body.barcode)
  const [pending, codes] = await Promise.all([
    row.status === 'pending' ? pendingDependencies(platform.rm, organizationId, dependenciesOf(row)) : [],
    barcode === null ? [] : labelCodes(platform.rm, row.shipment_id === null ? null : Number(row.shipment_id)),
  ])
  return {
    signed_by: text(body.signed_by), notes: text(body.notes), barcode,
    attachment_ids: [...new Set(body.attachment_ids ?? [])], label_codes: codes, pending_dependencies: pending,
  }
}
