import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import type { Database } from './database.js'
import type { RequestReads, RequestReadsOptions } from './request-reads.js'
import { postgresRequestReads } from './postgres-request-reads.js'

// int8 ids stay below 2^53; parse them as numbers.
pg.types.setTypeParser(20, (v) => Number(v))

/** One engine since the embedded default became a PostgreSQL server (DESIGN §2); kept for what reports it (/health). */
export type DatabaseKind = 'postgres'

/** One database: the Kysely handle plus the things Kysely does not cover. */
export interface DatabaseHandle {
  kind: DatabaseKind
  db: Kysely<Database>
  /** LISTEN on a channel; resolves to an unlisten function. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>
  /**
   * A small pool of its own for background work (projector, relay), so that it is never queued
   * behind request traffic in the main pool.
   */
  dedicated(name: string, max: number): Kysely<Database>
  /**
   * A string of statements sent in one round trip by the
   * simple-query protocol, run as one implicit transaction; resolves to each statement's rows.
   * Build the string with `inlineStatements`.
   */
  sendStatements?: (text: string) => Promise<unknown[][]>
  /**
   * Handles for a request's reads (request-reads.ts): a pool of their own under the statement
   * timeout, cancelled when the request's signal aborts.
   */
  requestReads(opts: RequestReadsOptions): RequestReads
  close(): Promise<void>
}

export interface OpenOptions {
  /** postgres://… of a server: DATABASE_URL, or the embedded one's (embedded/embedded-server.ts). */
  url: string
  poolSize?: number
  /**
   * A new connection not established within this long fails (as does a wait this long for a free
   * one), so a request does not hang while the server is down. Default 5 s.
   */
  connectTimeoutMs?: number
}

export async function openDatabase(opts: OpenOptions): Promise<DatabaseHandle> {
  return openPostgres(opts.url, opts.poolSize ?? 20, opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS)
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5000

/** Where a dropped connection's error goes: it is expected (a restart, a crash), and the query it failed has its own error. */
const ignoreClientError = (): void => {}

function kyselyOver(url: string, max: number, applicationName: string, connectTimeoutMs: number): Kysely<Database> {
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool: poolOver(url, max, applicationName, connectTimeoutMs) }) })
}

function poolOver(url: string, max: number, applicationName: string, connectTimeoutMs: number, statementTimeoutMs = 0): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    application_name: applicationName,
    connectionTimeoutMillis: connectTimeoutMs,
    // A server that vanished without closing the socket (a host down) is noticed by the kernel.
    keepAlive: true,
    // DESIGN §6: an idle-in-transaction session holds back the snapshot xmin and stalls every reader.
    // A statement timeout set at connection start costs no round trip per statement.
    options: `-c idle_in_transaction_session_timeout=60000${statementTimeoutMs > 0 ? ` -c statement_timeout=${Math.trunc(statementTimeoutMs)}` : ''}`,
  })
  pool.on('error', () => { /* a dropped idle client is replaced on next checkout */ })
  // pg-pool listens for an idle client's errors only: while the application holds a client, a
  // server-side disconnect (57P01 on a restart, a crash's reset) is an 'error' event nobody hears,
  // which ends the process. Every client gets a listener of its own for its whole life; the query
  // it failed rejects, and pg-pool drops the unqueryable client when it is released.
  pool.on('connect', (client) => { client.on('error', ignoreClientError) })
  return pool
}

async function openPostgres(url: string, max: number, connectTimeoutMs: number): Promise<DatabaseHandle> {
  const pool = poolOver(url, max, 'shipping-api', connectTimeoutMs)
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  const dedicated = new Map<string, Kysely<Database>>()
  /** Request read pools by statement timeout (one in practice: the config's); as large as the main pool, opened lazily. */
  const readPools = new Map<number, pg.Pool>()
  let listener: pg.Client | undefined
  let connecting: Promise<pg.Client> | undefined
  let closed = false
  let retry: NodeJS.Timeout | undefined
  const handlers = new Map<string, Set<(p: string) => void>>()
  const notifyAll = (payload: string) => {
    for (const set of handlers.values()) for (const h of set) h(payload)
  }
  /**
   * The one LISTEN connection. When it drops, it is opened again (backing off up to 1 s, so it is
   * back within about a second of the server answering again after a restart) and every
   * channel listened again; then each handler gets an empty payload, which every listener reads as
   * "anything may have changed" (caches clear, the projector and bus look again): notifications
   * sent while it was down are lost.
   */
  function listenClient(): Promise<pg.Client> {
    if (listener) return Promise.resolve(listener)
    connecting ??= (async () => {
      const client = new pg.Client({ connectionString: url, application_name: 'shipping-listen', connectionTimeoutMillis: connectTimeoutMs, keepAlive: true })
      const lost = () => {
        if (listener !== client) return
        listener = undefined
        client.end().catch(() => undefined)
        if (!closed) reconnect(200)
      }
      client.on('error', lost)
      client.on('end', lost)
      try {
        await client.connect()
        client.on('notification', (msg) => {
          for (const h of handlers.get(msg.channel) ?? []) h(msg.payload ?? '')
        })
        for (const channel of handlers.keys()) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`)
      } catch (err) {
        client.end().catch(() => undefined)
        throw err
      }
      listener = client
      return client
    })().finally(() => { connecting = undefined })
    return connecting
  }
  function reconnect(delayMs: number): void {
    clearTimeout(retry)
    retry = setTimeout(() => {
      listenClient().then(() => notifyAll(''), () => { if (!closed) reconnect(Math.min(delayMs * 2, 1_000)) })
    }, delayMs)
    retry.unref()
  }
  return {
    kind: 'postgres',
    db,
    async sendStatements(text) {
      // Without values node-postgres takes the simple-query protocol; several statements give an array
      // (its typings know one result only).
      const r: pg.QueryResult | pg.QueryResult[] = await pool.query(text)
      return (Array.isArray(r) ? r : [r]).map((x) => x.rows ?? [])
    },
    async listen(channel, onNotify) {
      let set = handlers.get(channel)
      const fresh = !set
      if (!set) {
        set = new Set()
        handlers.set(channel, set)
      }
      set.add(onNotify)
      const client = await listenClient()
      if (fresh) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`)
      return async () => { set.delete(onNotify) }
    },
    dedicated(name, poolMax) {
      let k = dedicated.get(name)
      if (!k) {
        k = kyselyOver(url, poolMax, `shipping-${name}`, connectTimeoutMs)
        dedicated.set(name, k)
      }
      return k
    },
    requestReads({ statementTimeoutMs }) {
      let readPool = readPools.get(statementTimeoutMs)
      if (!readPool) {
        readPool = poolOver(url, max, 'shipping-reads', connectTimeoutMs, statementTimeoutMs)
        readPools.set(statementTimeoutMs, readPool)
      }
      return postgresRequestReads(readPool)
    },
    async close() {
      closed = true
      clearTimeout(retry)
      const client = listener
      listener = undefined
      await client?.end().catch(() => undefined)
      for (const k of dedicated.values()) await k.destroy()
      const pools = [...readPools.values()]
      readPools.clear()
      for (const readPool of pools) await readPool.end()
      await db.destroy()
    },
  }
}

export async function ping(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db)
}
