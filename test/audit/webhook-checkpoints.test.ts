import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import t from 'tap'
import { logVerifierKey, openCheckpoint } from '../../src/audit/checkpoint-note.js'
import { readKnownHeads, storedTreeAgainst } from '../../src/audit/known-head.js'
import { WebhookCheckpoints } from '../../src/audit/webhook-checkpoint.js'
import { CheckpointKeeper } from '../../src/cli/webhook-sink-checkpoints.js'
import { startWebhookSink, type SinkDelivery } from '../../src/cli/webhook-sink-server.js'
import { silentLogger } from '../../src/infrastructure/bus/bus.js'
import { closeIdleConnections } from '../../src/notifications/safe-http.js'
import { startBackground } from '../../src/processes/background.js'
import { build } from '../helpers/build.js'
import { createShipment, documentAndReady } from '../notifications/fixtures/shipments.js'
import { until } from '../notifications/fixtures/receiver.js'
import { dbOf, sealedToTheEnd } from './fixtures.js'

// Every counter-party is a witness for free: the carrier's webhooks carry the latest checkpoint;
// its sink keeps them, and the next webhook after a rewrite of the log is caught.

const ORIGIN = 'shipping.test/audit'
t.teardown(() => closeIdleConnections())

t.test('webhooks carry the checkpoint; the sink keeps it and catches the log rewritten under it', async (t) => {
  const h = await build(t, { auditOrigin: ORIGIN, notarySignIntervalMs: 100 })
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const address = h.app.server.address()
  const logUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  const org = await h.createOrganization({ roles: ['carrier'], carriers_enabled: true })
  const res = await h.call('POST', '/api/v1/carriers', { token: org.token, body: { name: 'Keeping Carrier', integration: 'custom', visibility: 'private' } })
  t.equal(res.statusCode, 201, res.body)
  const carrier = res.json()
  const dir = mkdtempSync(join(tmpdir(), 'sink-checkpoints-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const keeper = new CheckpointKeeper(dir, logVerifierKey(ORIGIN, h.platform.notaryKey.publicKey), logUrl)
  const deliveries: SinkDelivery[] = []
  const sink = await startWebhookSink({ port: 0, secrets: [carrier.hmac_secret], keeper, onDelivery: (d) => deliveries.push(d) })
  t.teardown(() => sink.close())
  t.equal((await h.call('PATCH', `/api/v1/carriers/${carrier.carrier.id}`, { token: org.token, body: { notification_url: sink.url } })).statusCode, 200)

  let bg = await startBackground(h.platform, silentLogger)
  t.teardown(() => bg.stop())
  const shipment = { id: carrier.carrier.id, integration: 'custom' as const }
  const first = await createShipment(h.platform, shipment)
  await sealedToTheEnd(h)
  await documentAndReady(h.platform, first)
  await until(() => deliveries.some((d) => d.checkpoint?.outcome === 'kept'), 15_000, 'a webhook with a checkpoint, kept')
  t.ok(deliveries.every((d) => d.verified), 'the webhooks still verify with the carrier\'s secret')
  const kept = readKnownHeads(dir, h.platform.notaryKey.publicKey)
  t.ok(kept.length >= 1 && kept.every((k) => k.checkpoint), 'the sink kept checkpoints the log signed')
  t.same(await storedTreeAgainst(dbOf(h), kept.map((k) => k.checkpoint!)), [], 'which the stored tree extends')

  // An event already sealed: its webhook names its leaf.
  const created = (await sql<{ event_id: string; leaf_index: string }>`
    select event_id::text as event_id, leaf_index::text from audit_leaves where stream_id = ${`shipment-${first}`} and stream_version = 1`.execute(dbOf(h))).rows[0]!
  const headers = (await new WebhookCheckpoints(dbOf(h), h.platform.notaryKey, ORIGIN).headersFor([created.event_id]))(created.event_id)
  t.equal(headers['audit-leaf-index'], created.leaf_index)
  t.ok(openCheckpoint(Buffer.from(headers['audit-checkpoint']!, 'base64').toString(), logVerifierKey(ORIGIN, h.platform.notaryKey.publicKey)))

  // The rewrite: an event edited, the audit tables deleted, the (unwitnessed) notary re-seals and signs.
  await bg.stop()
  await sql`update es_events set data = data || jsonb_build_object('note', 'forged') where stream_id = ${`shipment-${first}`} and stream_version = 1`.execute(dbOf(h))
  for (const table of ['audit_leaves', 'audit_tree_nodes', 'audit_tree_heads', 'audit_notary', 'audit_checkpoints']) await sql`delete from ${sql.table(table)}`.execute(dbOf(h))
  bg = await startBackground(h.platform, silentLogger)
  const second = await createShipment(h.platform, shipment)
  await documentAndReady(h.platform, second)
  await until(() => deliveries.some((d) => d.checkpoint?.outcome === 'rewrite'), 20_000, 'the sink to catch the rewrite')
  const caught = deliveries.find((d) => d.checkpoint?.outcome === 'rewrite')!
  t.match(caught.checkpoint!.detail, /different roots|does not extend the checkpoint of \d+ kept/)
  t.equal(readdirSync(join(dir, 'conflicts')).length >= 1, true, 'the contradicting checkpoint is kept as evidence')
  t.ok((await storedTreeAgainst(dbOf(h), readKnownHeads(dir, h.platform.notaryKey.publicKey).map((k) => k.checkpoint!))).length >= 1, 'audit-log check --known-heads <the sink\'s dir> names it too')
})
