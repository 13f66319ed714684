import { sql } from 'kysely'
import { ConcurrencyError } from '../infrastructure/event-store/event-store.js'
import { appendDecided, awaitReadModels, type CommandContext } from '../shared/command-handler.js'
import type { Platform } from '../platform.js'
import { blueprintKeyStream, blueprintStream, type BlueprintEvent } from './blueprint.js'
import { BlueprintKeyEvents } from '../../schemas/events/blueprints.js'
import { isEvent } from '../../schemas/events/event-map.js'

// The I/O around a new blueprint, shared by the create slice and the defaults: its id, drawn before
// deciding, and its write with the key's reservation. The aggregate (blueprint.ts) stays pure.

/** Blueprint ids come from a sequence (DESIGN §3.4: blueprints are addressed by integer). */
export async function nextBlueprintId(platform: Platform): Promise<number> {
  const r = await sql<{ id: number }>`select nextval('blueprint_id_seq')::int as id`.execute(platform.db)
  return r.rows[0]!.id
}

/**
 * Appends a new blueprint's events (from its creation decision) together with its key's
 * reservation; false when the key was taken meanwhile. Returns once the read models have it.
 */
export async function appendNewBlueprint(
  platform: Platform, organizationId: string, key: string, id: number, events: BlueprintEvent[], ctx: CommandContext,
): Promise<boolean> {
  const keyStream = blueprintKeyStream(organizationId, key)
  try {
    await appendDecided(platform.commands, [
      { streamId: keyStream, events: [{ type: 'BlueprintKeyReserved', data: { organization_id: organizationId, key, blueprint_id: id } }], expected: 'no_stream' },
      { streamId: blueprintStream(id), events, expected: 'no_stream' },
    ], ctx)
    return true
  } catch (err) {
    if (!(err instanceof ConcurrencyError && err.streamId === keyStream)) throw err
    // The key's blueprint was made by another request: wait until the read models have it too,
    // so a caller that goes on to read it (the defaults) finds it.
    const [reserved] = await platform.store.readStream(keyStream)
    if (!isEvent(BlueprintKeyEvents, 'BlueprintKeyReserved', reserved)) throw err
    const theirs = await platform.store.readStream(blueprintStream(reserved.data.blueprint_id))
    const last = theirs[theirs.length - 1]
    await awaitReadModels(platform.commands, last?.position)
    return false
  }
}
