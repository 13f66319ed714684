// Organization webhook dispatch rate to a loopback receiver (issue 10 §7, goal ≥ 2,000/s), beside
// carrier notifications in the same run: one outbox, one dispatcher, so the two should match.
// Run: npx tsx test/bench/org-webhooks.bench.ts   (BENCH_WEBHOOKS=10000, BENCH_CONCURRENCY=200)
// Needs TEST_DATABASE_URL (test/bench/run-all.sh sets it): a scratch database on that server.
// Rows are seeded straight into the outbox (the intake is measured by the notifier's own tests);
// what is timed is claim → sign → POST → log → settle, as in webhooks.bench.ts.
import { sql } from 'kysely'
import { build } from '../helpers/build.js'
import { startReceiver } from './loopback-receiver.js'
import { WebhookDispatcher } from '../../src/notifications/dispatcher.js'
import { closeIdleConnections, postJson } from '../../src/notifications/safe-http.js'

const N = Number(process.env['BENCH_WEBHOOKS'] ?? 10_000)
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 200)

const teardowns: (() => unknown)[] = []
const t = { teardown: (fn: () => unknown) => { teardowns.push(fn) } }

async function main() {
  const receiver = await startReceiver()
  const url = receiver.url
  console.log(`org-webhooks: ${N} per run to a loopback receiver (own process), ${CONCURRENCY} calls in flight, db=${process.env['TEST_DB'] === 'postgres' ? 'postgres' : 'pglite'}`)

  {
    const started = performance.now()
    let next = 0
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < N) { next++; await postJson(url, '{"x":1}', {}, { timeoutMs: 5000, allowPrivate: true }) }
    }))
    console.log(`baseline: bare POSTs, no signing, no database          ${(N / ((performance.now() - started) / 1000)).toFixed(0)}/s`)
  }

  const h = await build(t, { webhookRetryDelaysMs: [1000] })
  const org = await h.createOrganization({ roles: ['carrier'], carriers_enabled: true })
  const carrier = (await h.call('POST', '/api/v1/carriers', { token: org.token, body: { name: 'Bench', integration: 'custom', visibility: 'private', notification_url: url } })).json()
  const webhook = (await h.call('POST', '/api/v1/webhooks', { token: org.token, body: { url, events: ['task.*'] } })).json()
  if (!webhook.webhook) throw new Error(`webhook: ${JSON.stringify(webhook)}`)

  const seedCarrier = (tag: string, n: number) => sql`
    insert into carrier_notifications (id, source_event_id, carrier_id, event, shipment_id, occurred_at, payload, next_attempt_at)
    select 'ntf_' || ${tag} || g, ${tag} || g, ${carrier.carrier.id}, 'new', g, now(),
      json_build_object('notification_id', 'ntf_' || ${tag} || g, 'event', 'new', 'shipment_id', g, 'carrier_id', ${carrier.carrier.id}::text, 'occurred_at', now())::text, now()
    from generate_series(1, ${n}) g`.execute(h.platform.db)
  const seedWebhook = (tag: string, n: number) => sql`
    insert into carrier_notifications (id, target, source_event_id, webhook_id, organization_id, event, occurred_at, payload, next_attempt_at)
    select 'msg_' || ${tag} || g, 'webhook', ${tag} || g, ${webhook.webhook.id}, ${org.id}, 'task.completed', now(),
      json_build_object('id', 'msg_' || ${tag} || g, 'type', 'task.completed', 'occurred_at', now(),
        'data', json_build_object('ulid', '01BENCH' || g, 'status', 'complete'))::text, now()
    from generate_series(1, ${n}) g`.execute(h.platform.db)

  const run = async (label: string, seed: () => Promise<unknown>, expected: number) => {
    await seed()
    receiver.reset()
    const before = Number((await sql<{ n: number }>`select count(*)::int as n from carrier_notifications where status = 'delivered'`.execute(h.platform.db)).rows[0]!.n)
    const dispatcher = new WebhookDispatcher(h.platform, { concurrency: CONCURRENCY, pollMs: 5 })
    const started = performance.now()
    dispatcher.start()
    for (;;) {
      const r = await sql<{ n: number }>`select count(*)::int as n from carrier_notifications where status = 'delivered'`.execute(h.platform.db)
      if (Number(r.rows[0]!.n) - before >= expected) break
      await new Promise((res) => setTimeout(res, 100)) // sparse
    }
    const secs = (performance.now() - started) / 1000
    await dispatcher.stop()
    const rate = expected / secs
    console.log(`${label.padEnd(52)} ${rate.toFixed(0)}/s  (${await receiver.count()} received)`)
    return rate
  }

  const carrierRate = await run('carrier notifications: signed, claimed, logged, settled', () => seedCarrier('c', N), N)
  const webhookRate = await run('organization webhooks: signed, claimed, logged, settled', () => seedWebhook('w', N), N)
  const mixedRate = await run('both at once (half each), one dispatcher', () => Promise.all([seedCarrier('mc', N / 2), seedWebhook('mw', N / 2)]), N)
  const failed = (await sql<{ n: number }>`select count(*)::int as n from carrier_notification_attempts where status_code is distinct from 200`.execute(h.platform.db)).rows[0]!
  console.log(`attempts that did not get a 200: ${failed.n}`)
  console.log(`goal ≥ 2,000/s for organization webhooks: ${webhookRate >= 2000 ? 'met' : 'NOT met'} (carrier ${carrierRate.toFixed(0)}/s, mixed ${mixedRate.toFixed(0)}/s)`)
  receiver.child.kill()
  closeIdleConnections()
  for (const fn of teardowns.reverse()) await fn()
}

await main()
