import t, { type Test } from 'tap'
import { ConcurrencyError } from '../../src/infrastructure/event-store/event-store.js'
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store.js'
import { controlNumberReservation, withFreshControlNumber, CONTROL_NUMBER_PATTERN, drawControlNumber } from '../../src/shipments/control-number.js'
import { controlNumberStream } from '../../src/shipments/shipment.js'
import { openTestDatabase } from '../helpers/test-database.js'
import { appendDecided } from '../../src/shared/command-handler.js'

const ctx = { now: new Date('2026-11-22T10:00:00Z'), actor: { kind: 'system' as const, id: 'test' } }

/** A store on a fresh database where `code` is already reserved for a carrier of its own. */
async function storeWithTaken(t: Test, code: string) {
  const db = await openTestDatabase(t)
  const store = new PostgresEventStore(db.db)
  t.teardown(() => store.close())
  const carrier = `org_${Date.now()}`
  await appendDecided({ store }, [controlNumberReservation(carrier, code, 'earlier', ctx.now)], ctx)
  return { store, carrier }
}

t.test('codes use the unambiguous alphabet', async (t) => {
  for (let i = 0; i < 200; i++) t.match(drawControlNumber(), CONTROL_NUMBER_PATTERN)
})

t.test('a taken code is drawn again; the reservation and its shipment are one write', async (t) => {
  const { store, carrier } = await storeWithTaken(t, 'AAAAA')
  const draws = ['AAAAA', 'AAAAA', 'BBBBB']
  const tried: string[] = []
  const code = await withFreshControlNumber(carrier, async (c) => {
    tried.push(c)
    await appendDecided({ store }, [
      controlNumberReservation(carrier, c, 'mine', ctx.now),
      { streamId: `shipment-test-${c}-${tried.length}`, events: [{ type: 'Created', data: { c } }], expected: 'no_stream' },
    ], ctx)
    return c
  }, 20, () => draws.shift()!)
  t.equal(code, 'BBBBB')
  t.same(tried, ['AAAAA', 'AAAAA', 'BBBBB'])
  t.same(await store.readStream('shipment-test-AAAAA-1'), [], 'a refused code left no shipment behind')
  t.equal((await store.readStream(controlNumberStream(carrier, 'AAAAA')))[0]?.data && ((await store.readStream(controlNumberStream(carrier, 'AAAAA')))[0]!.data as any).shipment_ulid, 'earlier', 'the earlier reservation stands')
  t.equal(((await store.readStream(controlNumberStream(carrier, 'BBBBB')))[0]!.data as any).shipment_ulid, 'mine')
})

t.test('gives up after maxAttempts, and other conflicts are not retried', async (t) => {
  const { store, carrier } = await storeWithTaken(t, 'CCCCC')
  let calls = 0
  await t.rejects(withFreshControlNumber(carrier, async (c) => { calls++; await appendDecided({ store }, [controlNumberReservation(carrier, c, 'y', ctx.now)], ctx) }, 3, () => 'CCCCC'), { code: 'concurrency_conflict', streamId: controlNumberStream(carrier, 'CCCCC') })
  t.equal(calls, 3)
  calls = 0
  await t.rejects(withFreshControlNumber(carrier, async () => { calls++; throw new ConcurrencyError('shipment-1', 'no_stream', 1) }), { code: 'concurrency_conflict', streamId: 'shipment-1' })
  t.equal(calls, 1, 'a conflict on another stream is not a taken code')
})
