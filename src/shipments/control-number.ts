import { randomInt } from 'node:crypto'
import { ConcurrencyError } from '../infrastructure/event-store/event-store.js'
import type { EventStore } from '../infrastructure/event-store/event-store.js'
import type { CommandContext } from '../shared/command-handler.js'
import { metadataOf } from '../shared/command-handler.js'
import { controlNumberStream } from './shipment.js'

/**
 * Control numbers: 5 characters, unique per carrier, read aloud and typed by people, so the
 * alphabet drops the look-alikes 0/O, 1/I/L and U/V (29 symbols, 20.5 million codes per carrier).
 * Uniqueness is a reservation stream per code appended with `no_stream`: the event store's
 * compare-and-set is the lock, and a taken code is simply drawn again.
 */
export const CONTROL_NUMBER_ALPHABET = '23456789ABCDEFGHJKMNPQRSTWXYZ'
export const CONTROL_NUMBER_LENGTH = 5
export const CONTROL_NUMBER_PATTERN = new RegExp(`^[${CONTROL_NUMBER_ALPHABET}]{${CONTROL_NUMBER_LENGTH}}$`)

export function drawControlNumber(random: (max: number) => number = randomInt): string {
  let out = ''
  for (let i = 0; i < CONTROL_NUMBER_LENGTH; i++) out += CONTROL_NUMBER_ALPHABET[random(CONTROL_NUMBER_ALPHABET.length)]
  return out
}

export async function reserveControlNumber(
  store: EventStore, carrierId: string, shipmentUlid: string, ctx: CommandContext, maxAttempts = 20,
): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const code = drawControlNumber()
    try {
      await store.append(controlNumberStream(carrierId, code), [{
        type: 'ControlNumberReserved',
        data: { carrier_id: carrierId, control_number: code, shipment_ulid: shipmentUlid, reserved_at: ctx.now.toISOString() },
        metadata: metadataOf(ctx),
      }], 'no_stream')
      return code
    } catch (err) {
      if (err instanceof ConcurrencyError && attempt < maxAttempts) continue
      throw err
    }
  }
}
