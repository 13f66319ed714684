// One task's organization webhooks go out in the order of its events, even when the intake of one
// of them fails and is retried: a later event must not overtake it. Found in CI (the README's
// session): a completion that recorded a skipped arrival sent task.completed before task.arrived.
import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { build } from '../helpers/build.js'
import type { Platform } from '../../src/platform.js'
import { startBackground } from '../../src/processes/background.js'
import { silentLogger } from '../../src/infrastructure/bus/bus.js'
import { newUlid } from '../../src/shared/ids.js'
import { closeIdleConnections } from '../../src/notifications/safe-http.js'
import { startReceiver, until } from '../notifications/fixtures/receiver.js'

t.teardown(() => closeIdleConnections())

const event = (p: Platform, type: string, ulid: string, organizationId: string) =>
  ({ type, data: { ulid, organization_id: organizationId }, metadata: { actor: { kind: 'organization' as const, id: organizationId }, occurred_at: p.clock().toISOString() } })

t.test('a task\'s webhooks keep its events\' order when the intake of one fails once', async (t) => {
  const h = await build(t, { webhookRetryDelaysMs: [40] })
  const org = await h.createOrganization({ roles: ['carrier'] })
  const suffix = randomBytes(4).toString('hex')
  const rx = await startReceiver(t)
  t.equal((await h.call('POST', '/api/v1/webhooks', { token: org.token, body: { url: rx.url, events: ['task.*'] } })).statusCode, 201)

  // A real failure of the database, once: the first outbox row of a task.arrived is refused (a
  // sequence, since it counts outside the transaction the error rolls back).
  const db = h.platform.db
  await sql`create sequence arrived_failures_${sql.raw(suffix)}`.execute(db)
  await sql.raw(`
    create function refuse_first_arrival_${suffix}() returns trigger language plpgsql as $$
    begin
      if new.event = 'task.arrived' and nextval('arrived_failures_${suffix}') = 1 then
        raise exception 'the outbox is unavailable for a moment';
      end if;
      return new;
    end $$`).execute(db)
  await sql.raw(`create trigger refuse_first_arrival_${suffix} before insert on carrier_notifications
    for each row execute function refuse_first_arrival_${suffix}()`).execute(db)
  t.teardown(async () => {
    await sql.raw(`drop trigger if exists refuse_first_arrival_${suffix} on carrier_notifications`).execute(db)
    await sql.raw(`drop function if exists refuse_first_arrival_${suffix}()`).execute(db)
    await sql.raw(`drop sequence if exists arrived_failures_${suffix}`).execute(db)
  })

  const bg = await startBackground(h.platform, silentLogger, { nats: { streamName: `ORDER_${suffix}`, subjectPrefix: `order${suffix}` } })
  t.teardown(() => bg.stop())

  const ulid = newUlid()
  const stream = `task-${ulid}`
  await h.platform.store.append(stream, [event(h.platform, 'TaskCreated', ulid, org.id)], 'any')
  await h.platform.store.append(stream, [event(h.platform, 'TaskStarted', ulid, org.id)], 'any')
  // One append, as a completion that records the skipped arrival writes it.
  await h.platform.store.append(stream, [event(h.platform, 'TaskArrived', ulid, org.id), event(h.platform, 'TaskCompleted', ulid, org.id)], 'any')

  const types = () => rx.received.map((r) => (JSON.parse(r.body) as { type: string }).type)
  await until(() => types().length >= 4, 20_000, 'four deliveries')
  t.same(types(), ['task.created', 'task.started', 'task.arrived', 'task.completed'], 'in the events\' order')
  const failed = await sql<{ n: string }>`select last_value as n from ${sql.raw(`arrived_failures_${suffix}`)}`.execute(db)
  t.ok(Number(failed.rows[0]!.n) >= 2, 'the arrival\'s first intake was refused and a later one went through')
})
