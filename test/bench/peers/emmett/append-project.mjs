// The peer's side of test/bench/vs-emmett.bench.ts: Emmett's PostgreSQL event store with one inline
// raw-SQL projection (the projection's row is written in the append's transaction, as Emmett
// recommends for read-your-writes). Plain JavaScript with its own package.json, so the platform's
// type-check and dependencies know nothing of it.
import { getPostgreSQLEventStore, postgreSQLRawSQLProjection } from '@event-driven-io/emmett-postgresql'
import { projections } from '@event-driven-io/emmett'
import { SQL } from '@event-driven-io/dumbo'
import pg from 'pg'

/** Appends `events` one after another through one writer; answers each append's latency in ms. */
export async function emmettAppendAndProject(url, events) {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  await c.query('create table if not exists emmett_organizations (id text primary key, name text not null, subdomain text not null, data jsonb not null)')
  const organizations = postgreSQLRawSQLProjection({
    name: 'organizations',
    canHandle: ['OrganizationCreated'],
    evolve: (e) => SQL`insert into emmett_organizations (id, name, subdomain, data) values (${e.data.id}, ${e.data.name}, ${e.data.subdomain}, ${JSON.stringify(e.data)})`,
  })
  const store = getPostgreSQLEventStore(url, { projections: projections.inline([organizations]) })
  await store.appendToStream('organization-warmup', [{ type: 'OrganizationCreated', data: { id: 'warmup', name: 'w', subdomain: 'w' } }])
  const samples = []
  for (const e of events) {
    const t0 = performance.now()
    await store.appendToStream(`organization-${e.data.id}`, [e])
    samples.push(performance.now() - t0)
  }
  const { rows } = await c.query('select count(*)::int as n from emmett_organizations')
  await store.close()
  await c.end()
  if (rows[0].n !== events.length + 1) throw new Error(`emmett projected ${rows[0].n} of ${events.length + 1}`)
  return samples
}
