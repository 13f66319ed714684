import { mkdirSync } from 'node:fs'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import type { Database } from './database.js'

// int8 ids stay below 2^53; parse them as numbers so pg and PGlite return the same shapes.
pg.types.setTypeParser(20, (v) => Number(v))

export type DatabaseKind = 'pglite' | 'postgres'

/** One database, whichever engine: the Kysely handle plus the two things Kysely does not cover. */
export interface DatabaseHandle {
  kind: DatabaseKind
  db: Kysely<Database>
  /** LISTEN on a channel; resolves to an unlisten function. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>
  /**
   * A small pool of its own for background work (projector, relay), so that it is never queued
   * behind request traffic in the main pool. PGlite has one connection: the same handle.
   */
  dedicated(name: string, max: number): Kysely<Database>
  close(): Promise<void>
}

export interface OpenOptions {
  /** postgres://… for a server; undefined for the embedded PGlite. */
  url?: string
  /** Directory of the embedded database; `memory://` for a throwaway one. */
  pgliteDir?: string
  poolSize?: number
}

export async function openDatabase(opts: OpenOptions): Promise<DatabaseHandle> {
  if (opts.url) return openPostgres(opts.url, opts.poolSize ?? 20)
  return openPglite(opts.pgliteDir ?? 'memory://')
}

function kyselyOver(url: string, max: number, applicationName: string): Kysely<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    application_name: applicationName,
    // DESIGN §6: an idle-in-transaction session holds back the snapshot xmin and stalls every reader.
    options: '-c idle_in_transaction_session_timeout=60000',
  })
  pool.on('error', () => { /* a dropped idle client is replaced on next checkout */ })
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
}

async function openPostgres(url: string, max: number): Promise<DatabaseHandle> {
  const db = kyselyOver(url, max, 'shipping-api')
  const dedicated = new Map<string, Kysely<Database>>()
  let listener: pg.Client | undefined
  const handlers = new Map<string, Set<(p: string) => void>>()
  async function listenClient(): Promise<pg.Client> {
    if (listener) return listener
    const client = new pg.Client({ connectionString: url })
    client.on('error', () => { listener = undefined })
    await client.connect()
    client.on('notification', (msg) => {
      for (const h of handlers.get(msg.channel) ?? []) h(msg.payload ?? '')
    })
    listener = client
    return client
  }
  return {
    kind: 'postgres',
    db,
    async listen(channel, onNotify) {
      const client = await listenClient()
      let set = handlers.get(channel)
      if (!set) {
        set = new Set()
        handlers.set(channel, set)
        await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`)
      }
      set.add(onNotify)
      return async () => { set.delete(onNotify) }
    },
    dedicated(name, poolMax) {
      let k = dedicated.get(name)
      if (!k) {
        k = kyselyOver(url, poolMax, `shipping-${name}`)
        dedicated.set(name, k)
      }
      return k
    },
    async close() {
      await listener?.end().catch(() => undefined)
      for (const k of dedicated.values()) await k.destroy()
      await db.destroy()
    },
  }
}

async function openPglite(dir: string): Promise<DatabaseHandle> {
  const { PGlite } = await import('@electric-sql/pglite')
  const { PGliteDialect } = await import('kysely-pglite-dialect')
  if (!dir.startsWith('memory://')) mkdirSync(dir, { recursive: true })
  const client = new PGlite(dir)
  await client.waitReady
  const db = new Kysely<Database>({ dialect: new PGliteDialect(client) })
  return {
    kind: 'pglite',
    db,
    async listen(channel, onNotify) {
      const unlisten = await client.listen(channel, onNotify)
      return async () => { await unlisten() }
    },
    dedicated: () => db,
    async close() {
      await db.destroy()
    },
  }
}

export async function ping(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db)
}
