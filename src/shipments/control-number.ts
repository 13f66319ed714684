import { randomInt } from 'node:crypto'
import { ConcurrencyError } from '../infrastructure/event-store/event-store.js'
import type { DecidedAppend } from '../shared/command-handler.js'
import { controlNumberStream } from './shipment.js'

/**
 * Control numbers: 5 characters, unique per carrier, read aloud and typed by people, so the
 * alphabet drops the look-alikes 0/O, 1/I/L and U/V (29 symbols, 20.5 million codes per carrier).
 * Uniqueness is a reservation stream per code appended with `no_stream`, in the same atomic write
 * as the shipment: the event store's compare-and-set is the lock, and a taken code is simply drawn
 * again (no reservation is ever left without its shipment).
 */
export const CONTROL_NUMBER_ALPHABET = '23456789ABCDEFGHJKMNPQRSTWXYZ'
export const CONTROL_NUMBER_LENGTH = 5
export const CONTROL_NUMBER_PATTERN = new RegExp(`^[${CONTROL_NUMBER_ALPHABET}]{${CONTROL_NUMBER_LENGTH}}$`)

export function drawControlNumber(random: (max: number) => number = randomInt): string {
  let out = ''
  for (let i = 0; i < CONTROL_NUMBER_LENGTH; i++) out += CONTROL_NUMBER_ALPHABET[random(CONTROL_NUMBER_ALPHABET.length)]
  return out
}

/** The reservation of `code`: appended with the shipment that uses it, in one atomic write. */
export function controlNumberReservation(carrierId: string, code: string, shipmentUlid: string, now: Date): DecidedAppend {
  return {
    streamId: controlNumberStream(carrierId, code),
    events: [{ type: 'ControlNumberReserved', data: { carrier_id: carrierId, control_number: code, shipment_ulid: shipmentUlid, reserved_at: now.toISOString() } }],
    expected: 'no_stream',
  }
}

/**
 * Draws codes until one is free: `write(code)` appends the reservation of `code` with whatever
 * uses it, atomically, and a ConcurrencyError on the reservation stream means the code is taken.
 */
export async function withFreshControlNumber<T>(
  carrierId: string, write: (code: string) => Promise<T>, maxAttempts = 20, draw: () => string = drawControlNumber,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const code = draw()
    try {
      return await write(code)
    } catch (err) {
      if (err instanceof ConcurrencyError && err.streamId === controlNumberStream(carrierId, code) && attempt < maxAttempts) continue
      throw err
    }
  }
}
