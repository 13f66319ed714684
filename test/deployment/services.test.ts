// The contract between infra/local/test.sh and the suite: which services each run provides.
// TEST_DB=postgres: a reachable PostgreSQL admin URL; both runs: a JetStream-enabled nats-server.
import t from 'tap'
import pg from 'pg'
import { connect } from '@nats-io/transport-node'
import { jetstream, jetstreamManager, StorageType } from '@nats-io/jetstream'

const testDb = process.env['TEST_DB']
const databaseUrl = process.env['TEST_DATABASE_URL']
const natsUrl = process.env['NATS_URL']

// Under test.sh both are always set; run by hand (`npx tap <this file>`), whatever is set
// is still checked.
if (testDb !== undefined) {
  t.test('test.sh provides its environment', async (t) => {
    t.match(testDb, /^(postgres|pglite)$/, 'TEST_DB names a database adapter')
    t.match(databaseUrl ?? '', /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/, 'TEST_DATABASE_URL')
    t.match(natsUrl ?? '', /^nats:\/\/127\.0\.0\.1:\d+$/, 'NATS_URL')
  })
}

if (testDb === 'postgres' || (testDb === undefined && databaseUrl !== undefined)) {
  t.test('TEST_DATABASE_URL reaches a PostgreSQL 15+ superuser', async (t) => {
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    t.teardown(() => client.end())
    const { rows } = await client.query<{ one: number; version: string; superuser: string }>(
      `select 1 as one, current_setting('server_version_num') as version,
              current_setting('is_superuser') as superuser`,
    )
    t.equal(rows[0]?.one, 1, 'select 1 answers')
    t.ok(Number(rows[0]?.version) >= 150000, `server_version_num ${rows[0]?.version}`)
    t.equal(rows[0]?.superuser, 'on', 'can create the per-file test databases')
  })
}

if (natsUrl !== undefined) {
  t.test('NATS_URL reaches a nats-server with JetStream', async (t) => {
    const nc = await connect({ servers: natsUrl, timeout: 5000 })
    t.teardown(() => nc.close())
    const jsm = await jetstreamManager(nc)
    const account = await jsm.getAccountInfo()
    t.type(account.streams, 'number', 'JetStream account info answers')

    const name = `infra_check_${process.pid}_${Date.now()}`
    await jsm.streams.add({ name, subjects: [`${name}.>`], storage: StorageType.Memory })
    t.teardown(() => jsm.streams.delete(name))
    const ack = await jetstream(nc).publish(`${name}.ping`, 'pong')
    t.equal(ack.stream, name, 'a publish is stored by the stream')
    t.equal(ack.seq, 1)
  })
}
