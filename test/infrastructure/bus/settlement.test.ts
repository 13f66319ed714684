import t from 'tap'
import pg from 'pg'
import { type BusMessage, silentLogger } from '../../../src/infrastructure/bus/bus.js'
import { resolveConsumerOptions, runHandler } from '../../../src/infrastructure/bus/settlement.js'

const message: BusMessage = { id: 'm1', subject: 'events.x.Y', data: {}, key: undefined, headers: {}, publishedAt: new Date() }
const o = resolveConsumerOptions({ name: 'c', subjects: ['events.>'], maxDeliveries: 3, retryDelaysMs: [100, 2000] })

t.test('returning acks; throwing naks with the delay for that attempt', async (t) => {
  t.same(await runHandler(message, 1, o, () => {}, silentLogger), { kind: 'ack' })
  t.match(await runHandler(message, 1, o, () => { throw new Error('x') }, silentLogger), { kind: 'nak', delayMs: 100, error: /x/ })
  t.match(await runHandler(message, 2, o, () => { throw new Error('x') }, silentLogger), { kind: 'nak', delayMs: 2000 })
})

t.test('explicit settlement: first call wins', async (t) => {
  t.same(await runHandler(message, 1, o, (d) => { d.nak(50); d.ack() }, silentLogger), { kind: 'nak', delayMs: 50 })
  t.same(await runHandler(message, 1, o, (d) => { d.nak() }, silentLogger), { kind: 'nak', delayMs: 100 })
  t.same(await runHandler(message, 1, o, (d) => { d.deadLetter('bad payload') }, silentLogger), { kind: 'dead', reason: 'rejected', error: 'bad payload' })
})

t.test('the last delivery dead-letters instead of retrying; one past it skips the handler', async (t) => {
  t.match(await runHandler(message, 3, o, () => { throw new Error('still failing') }, silentLogger), { kind: 'dead', reason: 'max_deliveries', error: /still failing/ })
  t.match(await runHandler(message, 3, o, (d) => { d.nak(10) }, silentLogger), { kind: 'dead', reason: 'max_deliveries' })
  let ran = false
  t.match(await runHandler(message, 4, o, () => { ran = true }, silentLogger), { kind: 'dead', reason: 'max_deliveries', error: /not settled/ })
  t.notOk(ran, 'the handler did not run a fourth time')
})

t.test('a database that cannot be reached: retried in place, the delivery kept', async (t) => {
  // A real refusal: nothing listens on port 1.
  const refused = await new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres' }).connect().then(() => undefined, (e: unknown) => e)
  let calls = 0
  const started = Date.now()
  const s = await runHandler(message, 3, o, () => { if (++calls < 3) throw refused }, silentLogger)
  t.same(s, { kind: 'ack' }, 'acknowledged once the database answered, on the last allowed delivery')
  t.equal(calls, 3, 'the handler ran again in place')
  t.ok(Date.now() - started < 2000, 'after short waits')
  let other = 0
  t.match(await runHandler(message, 1, o, () => { other++; throw new Error('a bug') }, silentLogger), { kind: 'nak', delayMs: 100 })
  t.equal(other, 1, 'any other failure is not retried in place')
})

t.test('options are checked', async (t) => {
  t.throws(() => resolveConsumerOptions({ name: 'c', subjects: [] }), /at least one subject/)
  t.throws(() => resolveConsumerOptions({ name: 'c', subjects: ['events.>'], maxDeliveries: 0 }), /maxDeliveries/)
})
