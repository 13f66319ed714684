import { sql } from 'kysely'
import t from 'tap'
import { NatsBus } from '../../../src/infrastructure/bus/nats-bus.js'
import { PostgresEventStore } from '../../../src/infrastructure/event-store/postgres-event-store.js'
import { idempotent } from '../../../src/processes/idempotent-consumer.js'
import { Relay } from '../../../src/processes/relay.js'
import { natsServerBinary, startNatsServer } from '../../helpers/nats-server.js'
import { openTestDatabase, secondConnection } from '../../helpers/test-database.js'
import { busContract, rid, waitFor } from './bus-contract.js'

// NATS_URL (set by `npm test`) or, run by hand, a private nats-server when one is installed.
const binary = natsServerBinary()
let natsUrl = process.env['NATS_URL']
if (!natsUrl && binary) {
  const own = await startNatsServer(binary)
  t.teardown(() => own.destroy())
  natsUrl = own.url
}

if (!natsUrl) {
  t.comment('SKIPPED: the NATS half of the bus contract needs NATS_URL or a nats-server binary')
  t.test('NATS bus contract', { skip: 'no NATS_URL and no nats-server installed' }, () => {})
} else {
  const url = natsUrl
  const db = await openTestDatabase(t)
  // Each run gets its own stream and subject prefix on a shared server. A short duplicate window
  // lets a relay's republished batch through, so the idempotent consumers are really exercised.
  const stream = `T_${rid()}`
  const prefix = `t${rid()}.`
  const buses: NatsBus[] = []
  t.teardown(async () => {
    const cleanup = await NatsBus.connect({ url, db: db.db, streamName: stream, subjectPrefix: prefix })
    await cleanup.destroyStream()
    await cleanup.close()
  })

  busContract(t, {
    adapter: 'nats',
    db,
    otherDb: () => secondConnection(t, db),
    async newBus(handle) {
      const bus = await NatsBus.connect({ url, db: handle.db, streamName: stream, subjectPrefix: prefix, duplicateWindowMs: 200 })
      buses.push(bus)
      return bus
    },
  })

  t.test('nats-server restarted mid-flow: nothing lost once it is back', { skip: binary ? false : 'no nats-server binary to restart' }, async (t) => {
    const server = await startNatsServer(binary)
    t.teardown(() => server.destroy())
    const bus = await NatsBus.connect({ url: server.url, db: db.db, streamName: 'RESTART', publishTimeoutMs: 1000 })
    t.teardown(() => bus.close({ graceMs: 0 }))
    const store = new PostgresEventStore(db.db)
    const cat = `restart${rid()}`
    const consumer = `c_${cat}`
    await bus.subscribe({ name: consumer, subjects: [`events.${cat}.>`], ackWaitMs: 1000 }, idempotent(db.db, async (d, trx) => {
      await sql`insert into test_effects (consumer, message_id) values (${d.consumer}, ${d.id})`.execute(trx)
    }))
    const relay = new Relay(db.db, store, bus, { name: `relay_${cat}`, pollMs: 50, batchSize: 50 })
    relay.start()
    t.teardown(() => relay.stop())

    const appended: string[] = []
    const append = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const id = crypto.randomUUID()
        await store.append(`${cat}-${appended.length % 5}`, [{ id, type: 'Ticked', data: { i: appended.length }, metadata: { actor: { kind: 'system', id: 't' }, occurred_at: new Date().toISOString() } }], 'any')
        appended.push(id)
        await new Promise((r) => setTimeout(r, 5))
      }
    }
    const handled = async () => (await sql<{ message_id: string }>`select message_id from test_effects where consumer = ${consumer}`.execute(db.db)).rows.map((r) => r.message_id)

    await append(30)
    await waitFor('some handled before the outage', async () => (await handled()).length >= 10)
    await server.stop('SIGKILL')
    await append(30)
    await new Promise((r) => setTimeout(r, 300))
    await server.start()
    await append(30)
    await waitFor('everything handled after the restart', async () => (await handled()).length >= appended.length, 25_000)
    await new Promise((r) => setTimeout(r, 300))
    t.same((await handled()).sort(), [...appended].sort(), 'every event appended before, during and after the outage handled once')
    // The checkpoint moves after the bus acknowledges, a step behind what consumers already saw.
    await waitFor('the relay caught up', async () => (await relay.status()).lag === 0, 5000)
    t.equal((await relay.status()).lag, 0, 'the relay caught up')
  })
}
