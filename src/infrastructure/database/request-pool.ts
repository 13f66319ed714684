import { AsyncLocalStorage } from 'node:async_hooks'
import type { PostgresPool, PostgresPoolClient } from 'kysely'
import type pg from 'pg'
import { cancelKeyOf, sendCancelRequest } from './cancel-request.js'
import { RequestAbandonedError } from './cancelled-statement.js'
import type { RequestWork, RequestWorkOptions } from './request-work.js'

/** A connection taken from the pool; `release` gives it back (or closes it). */
export interface Checkout {
  client: pg.PoolClient
  release(): void
}

/**
 * The main pool as requests and background work share it. A checkout made inside a request's
 * `run` (and before its `finish`) sets the connection's statement_timeout to the request's, and is
 * known to the request until released, so that `abandon` can cancel it; any other checkout resets
 * the timeout to the server's default, so the projector's neighbours on this pool (the in-process
 * bus, the notifier, timers) are never cut by a request's limit. The setting is sent only when a
 * connection changes hands between the two kinds, not on every checkout.
 */
export class RequestPool implements PostgresPool {
  private readonly current = new AsyncLocalStorage<PostgresRequestWork>()
  /** The statement_timeout each connection was last given; absent: the server's default. */
  private readonly timeouts = new WeakMap<pg.PoolClient, number>()

  constructor(private readonly pool: pg.Pool) {}

  requestWork(opts: RequestWorkOptions): RequestWork {
    return new PostgresRequestWork(this.current, opts.statementTimeoutMs)
  }

  /** For Kysely: its `release()` is ours, so a request learns when its statement is done. */
  async connect(): Promise<PostgresPoolClient> {
    const { client, release } = await this.checkout()
    return { query: client.query.bind(client), release }
  }

  async checkout(): Promise<Checkout> {
    const work = this.current.getStore()
    work?.refuseIfAbandoned()
    const client = await this.pool.connect()
    try {
      // Its client may have left while this one waited for a free connection.
      work?.refuseIfAbandoned()
      await this.setTimeout(client, work?.open ? work.statementTimeoutMs : undefined)
    } catch (err) {
      client.release(err instanceof RequestAbandonedError ? undefined : true)
      throw err
    }
    if (!work?.open) return { client, release: () => client.release() }
    return work.hold(client)
  }

  end(): Promise<void> {
    return this.pool.end()
  }

  private async setTimeout(client: pg.PoolClient, ms: number | undefined): Promise<void> {
    if (this.timeouts.get(client) === ms) return
    await client.query(ms === undefined ? 'reset statement_timeout' : `set statement_timeout = ${Math.trunc(ms)}`)
    if (ms === undefined) this.timeouts.delete(client)
    else this.timeouts.set(client, ms)
  }
}

type State = 'open' | 'abandoned' | 'finished'

class PostgresRequestWork implements RequestWork {
  private state: State = 'open'
  /** The connections checked out for the request right now, each with what cancels its statement. */
  private readonly held = new Set<() => void>()

  constructor(private readonly current: AsyncLocalStorage<PostgresRequestWork>, readonly statementTimeoutMs: number) {}

  get open(): boolean { return this.state === 'open' }

  run<T>(fn: () => T): T {
    return this.current.run(this, fn)
  }

  abandon(): void {
    if (this.state !== 'open') return
    this.state = 'abandoned'
    for (const cancel of this.held) cancel()
    this.held.clear()
  }

  finish(): void {
    this.state = 'finished'
    this.held.clear()
  }

  refuseIfAbandoned(): void {
    if (this.state === 'abandoned') throw new RequestAbandonedError()
  }

  hold(client: pg.PoolClient): Checkout {
    let cancelled = false
    const cancel = () => {
      cancelled = true
      const key = cancelKeyOf(client)
      if (key) void sendCancelRequest(key)
    }
    this.held.add(cancel)
    return {
      client,
      release: () => {
        this.held.delete(cancel)
        // The cancel request travels on its own socket and may land after this statement ended:
        // the connection is closed rather than handed to another request whose statement it could hit.
        client.release(cancelled)
      },
    }
  }
}
