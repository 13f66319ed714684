import type { FastifyRequest } from 'fastify'
import type { Blueprint } from '../../schemas/api/blueprints.js'
import type { Decider } from '../shared/decider.js'
import { NotFoundError } from '../shared/errors.js'
import { handleCommand, type CommandContext } from '../shared/command-handler.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { Platform } from '../platform.js'
import { blueprintStream, type BlueprintEvent, type BlueprintState } from './blueprint.js'
import { ensureDefaultBlueprints } from './default-blueprints.js'
import { findBlueprint, readBlueprint } from './queries.js'

/**
 * The path of a command on an existing blueprint (by id or key) of the caller's organization: find
 * it (404 otherwise), decide on its stream, answer `{success, blueprint}` as the read model has it.
 */
export async function runBlueprintCommand<C>(
  platform: Platform, req: FastifyRequest, idOrKey: string, decider: Decider<BlueprintState, C, BlueprintEvent>,
  command: (organizationId: string, ctx: CommandContext) => C | Promise<C>,
): Promise<{ success: true; blueprint: Blueprint }> {
  const org = organizationOf(req)
  await ensureDefaultBlueprints(platform, org.id)
  const b = await findBlueprint(platform.rm, org.id, idOrKey)
  if (!b) throw new NotFoundError('Blueprint')
  const ctx = commandContext(platform, req)
  await handleCommand(platform.commands, blueprintStream(b.id), decider, await command(org.id, ctx), ctx)
  return { success: true, blueprint: (await readBlueprint(platform.rm, org.id, b.id))! }
}
