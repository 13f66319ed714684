// Webhook dispatch rate to a loopback receiver (issue 5 §7, goal ≥ 2,000/s).
// Run: npx tsx test/bench/webhooks.bench.ts   (BENCH_WEBHOOKS=10000, BENCH_CONCURRENCY=200)
// Needs TEST_DATABASE_URL (test/bench/run-all.sh sets it): a scratch database on that server.
// Baseline, same run: unsigned POSTs to the same receiver through the same HTTP client with the
// same concurrency and no database, i.e. the ceiling the dispatcher could reach.
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
  console.log(`webhooks: ${N} to a loopback receiver (own process), ${CONCURRENCY} calls in flight, db=${process.env['TEST_DB'] === 'postgres' ? 'postgres' : 'pglite'}`)

  // Baseline: the HTTP client alone.
  {
    const started = performance.now()
    let next = 0
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < N) { next++; await postJson(url, '{"x":1}', {}, { timeoutMs: 5000, allowPrivate: true }) }
    }))
    const secs = (performance.now() - started) / 1000
    console.log(`baseline: bare POSTs, no signing, no database   ${(N / secs).toFixed(0)}/s`)
  }

  const h = await build(t, { webhookRetryDelaysMs: [1000] })
  const org = await h.createOrganization({ roles: ['carrier'], carriers_enabled: true })
  const carrier = (await h.call('POST', '/api/v1/carriers', { token: org.token, body: { name: 'Bench', integration: 'custom', visibility: 'private', notification_url: url } })).json()
  await sql`
    insert into carrier_notifications (id, source_event_id, carrier_id, event, shipment_id, occurred_at, payload, next_attempt_at)
    select 'ntf_bench' || g, 'evt' || g, ${carrier.carrier.id}, 'new', g, now(),
      json_build_object('notification_id', 'ntf_bench' || g, 'event', 'new', 'shipment_id', g, 'carrier_id', ${carrier.carrier.id}::text, 'occurred_at', now())::text, now()
    from generate_series(1, ${N}) g`.execute(h.platform.db)
  receiver.reset()
  const dispatcher = new WebhookDispatcher(h.platform, { concurrency: CONCURRENCY, pollMs: 5 })
  const started = performance.now()
  dispatcher.start()
  for (;;) {
    const r = await sql<{ n: number }>`select count(*)::int as n from carrier_notifications where status = 'delivered'`.execute(h.platform.db)
    if (Number(r.rows[0]!.n) >= N) break
    await new Promise((res) => setTimeout(res, 100)) // sparse
  }
  const secs = (performance.now() - started) / 1000
  await dispatcher.stop()
  const attempts = await sql<{ n: number; failed: number }>`
    select count(*)::int as n, count(*) filter (where status_code is distinct from 200)::int as failed from carrier_notification_attempts`.execute(h.platform.db)
  const rate = N / secs
  console.log(`dispatcher: signed, claimed, logged, settled     ${rate.toFixed(0)}/s  (${await receiver.count()} received, ${attempts.rows[0]!.n} attempts logged, ${attempts.rows[0]!.failed} failed and retried)`)
  console.log(`goal ≥ 2,000/s: ${rate >= 2000 ? 'met' : 'NOT met'}`)
  receiver.child.kill()
  closeIdleConnections()
  for (const fn of teardowns.reverse()) await fn()
}

await main()
