import { sql, type Selectable, type Kysely } from 'kysely'
import type { Delivery, Webhook } from '../../schemas/api/webhooks.js'
import type { WebhooksTable } from '../../projections/webhooks/tables.js'
import type { Platform } from '../platform.js'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import { attemptsByDelivery } from '../notifications/attempts.js'
import type { PageRequest } from '../http/pagination.js'
import { readPage, type ListingKey } from '../http/listing-seek.js'
import { keyAt, seekConditions, summed, type ListingColumns } from '../http/listing-sql.js'
import { listOutbox } from '../notifications/outbox-listing.js'
import { iso, isoOrNull, json } from '../shared/rows.js'

type WebhookRow = Selectable<WebhooksTable>


export const toWebhook = (r: WebhookRow): Webhook => ({
  id: r.id, url: r.url, events: json<string[]>(r.events),
  created_at: iso(r.created_at), updated_at: iso(r.updated_at),
})

/** A live webhook of the organization, or undefined (another organization's, or deleted, is unknown). */
export const findWebhook = (db: Kysely<ReadModelDatabase>, orgId: string, id: string) =>
  db.selectFrom('webhooks').selectAll().where('id', '=', id).where('organization_id', '=', orgId).where('deleted_at', 'is', null).executeTakeFirst()

const KEY: ListingColumns = { at: 'created_at', atKind: 'instant', id: 'id', idType: 'text', order: 'asc' }

/** The organization's live webhooks oldest first: the total from webhook_listing_counts, a page through the live rows' index (issue 32). */
export async function listWebhooks(db: Kysely<ReadModelDatabase>, orgId: string, page: PageRequest, after?: ListingKey) {
  const total = async () => summed(await db.selectFrom('webhook_listing_counts').select('n').where('organization_id', '=', orgId).execute())
  const { shown, ...listed } = await readPage({ days: undefined, countTotal: total, order: 'asc', page, after, read: async (seek, limit) => {
    let q = db.selectFrom('webhooks').selectAll().select(keyAt(KEY).as('at')).where('organization_id', '=', orgId).where('deleted_at', 'is', null)
    for (const c of seekConditions(KEY, seek)) q = q.where(c)
    const rows = await q.orderBy('created_at').orderBy('id').offset(seek.skip).limit(limit).execute()
    return rows.map(({ at, ...row }) => ({ row, key: { at, id: row.id } }))
  } })
  return { rows: shown.map((r) => r.row), ...listed }
}

// The delivery log is the outbox itself (public schema), not a projection: it is written by the
// notifier and the dispatcher, never by events.
interface DeliveryRow {
  id: string; event: string; status: Delivery['status']; next_attempt_at: Date | string | null; delivered_at: Date | string | null
  occurred_at: Date | string; created_at: Date | string
}

async function withAttempts(platform: Pick<Platform, 'db'>, rows: DeliveryRow[]): Promise<Delivery[]> {
  const byId = await attemptsByDelivery(platform, rows.map((r) => r.id))
  return rows.map((r) => ({
    id: r.id, type: r.event, status: r.status,
    attempts: byId.get(r.id) ?? [],
    next_attempt_at: isoOrNull(r.next_attempt_at), delivered_at: isoOrNull(r.delivered_at), occurred_at: iso(r.occurred_at), created_at: iso(r.created_at),
  }))
}

const COLUMNS = sql`id, event, status, next_attempt_at, delivered_at, occurred_at, created_at`

/** A webhook's deliveries, newest first, each with every attempt; flat at any size (src/notifications/outbox-listing.ts). */
export async function listDeliveries(platform: Pick<Platform, 'db'>, webhookId: string, f: { status?: Delivery['status'] | undefined }, page: PageRequest, after?: ListingKey) {
  const listed = await listOutbox<DeliveryRow>(platform.db, { target: 'webhook', webhookId }, { status: f.status }, COLUMNS, page.perPage, page.page, after)
  return { deliveries: await withAttempts(platform, listed.rows), total: listed.total, hasMore: listed.hasMore, last: listed.last }
}

export async function findDelivery(platform: Platform, webhookId: string, id: string): Promise<Delivery | undefined> {
  const rows = (await sql<DeliveryRow>`select ${COLUMNS} from carrier_notifications
    where target = 'webhook' and webhook_id = ${webhookId} and id = ${id}`.execute(platform.db)).rows
  return (await withAttempts(platform, rows))[0]
}
