// kill -9 of an API process (DESIGN §5: "a second process takes over within seconds when the
// first dies"): on PostgreSQL + NATS two processes, the relay's owner killed while it answers
// shipments; on the embedded default one process, killed and started again. Every acknowledged
// shipment gets its workflow (through the relay and a bus consumer), exactly once. How fast is a
// figure, measured by test/bench/failover.bench.ts, not asserted here.
import t, { type Test } from 'tap'
import { createScratchDatabase } from '../helpers/test-database.js'
import { deployment, relayOwner, ship, until, workflowsOf } from './fixtures/two-api-processes.js'

const teardown = (fn: () => unknown) => t.teardown(fn)

async function everyWorkflowOnce(t: Test, via: Parameters<typeof workflowsOf>[0], carrierToken: string, ids: number[]) {
  await until('a workflow for every acknowledged shipment', async () => {
    for (const id of ids) if ((await workflowsOf(via, carrierToken, id)) === 0) return false
    return true
  }, 60_000)
  const counts = await Promise.all(ids.map((id) => workflowsOf(via, carrierToken, id)))
  t.same(counts, ids.map(() => 1), `each of ${ids.length} acknowledged shipments has exactly one workflow`)
}

t.test('two processes on PostgreSQL + NATS: the relay owner killed mid-traffic, the other takes over, nothing lost or doubled', async (t) => {
  const d = deployment({ databaseUrl: await createScratchDatabase(t), natsUrl: process.env.NATS_URL }, teardown)
  t.teardown(() => d.close())
  const a = await d.start()
  const b = await d.start()
  const { shipperToken, carrierToken, carrierId } = await d.setup(a)
  const owner = await until('a relay owner', () => relayOwner([a, b]))
  const survivor = owner === a ? b : a
  const before = (await Promise.all([ship(a, shipperToken, carrierId), ship(b, shipperToken, carrierId)])).filter((x) => x !== undefined)
  await everyWorkflowOnce(t, survivor, carrierToken, before)

  // Shipments sent to the owner as it dies (four at a time; killed after the tenth answer):
  // whichever it acknowledged must not be lost.
  const acknowledged: number[] = []
  let dead = false
  const senders = Array.from({ length: 4 }, async () => {
    while (!dead) {
      const id = await ship(owner, shipperToken, carrierId)
      if (id === undefined) return
      acknowledged.push(id)
      if (acknowledged.length === 10) { dead = true; owner.child.kill('SIGKILL') }
    }
  })
  await Promise.all(senders)
  t.equal(await owner.exited, null, 'killed')
  const after: number[] = []
  for (let i = 0; i < 10; i++) after.push((await ship(survivor, shipperToken, carrierId))!)
  t.ok(after.every((x) => typeof x === 'number'), 'the survivor keeps answering')
  await until('the survivor to hold the relay', async () => (await relayOwner([survivor])) === survivor)
  await everyWorkflowOnce(t, survivor, carrierToken, [...before, ...acknowledged, ...after])
  t.ok(acknowledged.length >= 10, `${acknowledged.length} acknowledged by the process that died`)
})

t.test('the embedded default: killed and started again, nothing acknowledged is lost or doubled', async (t) => {
  const d = deployment({}, teardown)
  t.teardown(() => d.close())
  const first = await d.start()
  const { shipperToken, carrierToken, carrierId } = await d.setup(first)
  const acknowledged: number[] = []
  let dead = false
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (!dead) {
      const id = await ship(first, shipperToken, carrierId)
      if (id === undefined) return
      acknowledged.push(id)
      if (acknowledged.length === 8) { dead = true; first.child.kill('SIGKILL') }
    }
  }))
  await first.exited
  const second = await d.start()
  const later = (await ship(second, shipperToken, carrierId))!
  t.type(later, 'number')
  await everyWorkflowOnce(t, second, carrierToken, [...acknowledged, later])
  t.equal(await second.stop(), 0)
})
