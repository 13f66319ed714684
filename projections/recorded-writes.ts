import {
  type CompiledQuery, type DatabaseConnection, type Driver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type QueryResult,
} from 'kysely'
import type { RecordedEvent } from '../src/infrastructure/event-store/event-store.js'
import type { Projection, ProjectionContext } from './projection.js'
import type { ReadModelDatabase } from './read-model-database.js'

/** A connection that keeps what it is asked to run, answering every query with no rows. */
class Recording implements Driver, DatabaseConnection {
  readonly queries: CompiledQuery[] = []
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> { return this }
  async beginTransaction(): Promise<void> { throw new Error('a recorded projection opens no transaction') }
  async commitTransaction(): Promise<void> {}
  async rollbackTransaction(): Promise<void> {}
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {}
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    this.queries.push(query)
    return { rows: [] }
  }
  // eslint-disable-next-line require-yield
  async *streamQuery(): AsyncIterableIterator<QueryResult<never>> { throw new Error('not supported') }
}

/**
 * `statements` for a projection whose `apply` only writes (it never reads what a query returns): its
 * `apply` runs against a connection that records the queries instead of sending them, so the runner
 * can send them with the round's other writes in one round trip (Projection.statements). A
 * projection that reads must not use it: every query here answers no rows.
 */
export function recordedWrites(apply: Projection['apply']): NonNullable<Projection['statements']> {
  return async (_db, events: RecordedEvent[], ctx: ProjectionContext) => {
    const recording = new Recording()
    const db = new Kysely<ReadModelDatabase>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => recording,
        createIntrospector: (k) => new PostgresIntrospector(k),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
    })
    await apply(db.withSchema(ctx.schema), events, ctx)
    return recording.queries
  }
}

/** The projection with `statements` recorded from its `apply` (a projection that only writes). */
export const writesOnly = (p: Projection): Projection => ({ ...p, statements: recordedWrites(p.apply) })
