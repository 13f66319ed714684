import t from 'tap'
import pg from 'pg'
import { backoffMs } from '../../src/shared/step-loop.js'

t.test('step loops back off to 5 s, to 1 s while the database cannot be reached', async (t) => {
  const refused = await new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres' }).connect().then(() => undefined, (e: unknown) => e)
  t.same([1, 2, 3, 10].map((n) => backoffMs(n)), [200, 400, 800, 5000])
  t.same([1, 2, 3, 10].map((n) => backoffMs(n, new Error('a bug'))), [200, 400, 800, 5000])
  t.same([1, 2, 3, 10].map((n) => backoffMs(n, refused)), [200, 400, 800, 1000])
})
