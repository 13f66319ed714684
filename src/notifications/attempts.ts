import { sql } from 'kysely'
import type { Platform } from '../platform.js'

/** One delivery attempt as the delivery logs show it (carrier notifications and organization webhooks). */
export interface AttemptView { attempt: number; attempted_at: string; status_code: number | null; latency_ms: number; error: string | null }

interface AttemptRow { notification_id: string; attempt: number; attempted_at: Date | string; status_code: number | null; latency_ms: number; error: string | null }

/** Every attempt of these outbox rows, in order, by row id: one query for a page of the log. */
export async function attemptsByDelivery(platform: Pick<Platform, 'db'>, ids: string[]): Promise<Map<string, AttemptView[]>> {
  const byId = new Map<string, AttemptView[]>()
  if (ids.length === 0) return byId
  const rows = (await sql<AttemptRow>`
    select notification_id, attempt, attempted_at, status_code, latency_ms, error from carrier_notification_attempts
    where notification_id = any(${ids}::text[]) order by id`.execute(platform.db)).rows
  for (const a of rows) {
    const list = byId.get(a.notification_id) ?? byId.set(a.notification_id, []).get(a.notification_id)!
    list.push({ attempt: a.attempt, attempted_at: new Date(a.attempted_at).toISOString(), status_code: a.status_code, latency_ms: Number(a.latency_ms), error: a.error })
  }
  return byId
}
