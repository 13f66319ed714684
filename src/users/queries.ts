import type { Selectable, Kysely } from 'kysely'
import type { User } from '../../schemas/api/users.js'
import type { UsersTable } from '../../projections/users/tables.js'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import type { PageRequest } from '../http/pagination.js'
import { iso } from '../shared/rows.js'
import { readPage, type ListingKey } from '../http/listing-seek.js'
import { keyAt, seekConditions, summed, type ListingColumns } from '../http/listing-sql.js'

type UserRow = Selectable<UsersTable>


export const toUser = (r: UserRow): User => ({
  id: r.id, name: r.name, email: r.email, phone: r.phone, role: r.role, status: r.status,
  created_at: iso(r.created_at), updated_at: iso(r.updated_at), deactivated_at: r.deactivated_at === null ? null : iso(r.deactivated_at),
})

/** A user of the organization, or undefined (another organization's users are unknown). */
export const findUser = (db: Kysely<ReadModelDatabase>, orgId: string, userId: string) =>
  db.selectFrom('users').selectAll().where('id', '=', userId).where('organization_id', '=', orgId).executeTakeFirst()

type UserFilters = { role?: UserRow['role'] | undefined; status?: UserRow['status'] | undefined }

/** The total under the filters: from user_listing_counts (at most roles × statuses rows). */
async function usersTotal(db: Kysely<ReadModelDatabase>, orgId: string, f: UserFilters): Promise<number> {
  let q = db.selectFrom('user_listing_counts').select('n').where('organization_id', '=', orgId)
  if (f.role) q = q.where('role', '=', f.role)
  if (f.status) q = q.where('status', '=', f.status)
  return summed(await q.execute())
}

const KEY: ListingColumns = { at: 'created_at', atKind: 'instant', id: 'id', idType: 'text', order: 'asc' }

/** The organization's users oldest first, a page through the index of its filters (issue 32, src/http/listing-seek.ts). */
export async function listUsers(db: Kysely<ReadModelDatabase>, orgId: string, f: UserFilters, page: PageRequest, after?: ListingKey) {
  const { shown, ...listed } = await readPage({
    days: undefined, countTotal: () => usersTotal(db, orgId, f), order: 'asc', page, after,
    read: async (seek, limit) => {
      let q = db.selectFrom('users').selectAll().select(keyAt(KEY).as('at')).where('organization_id', '=', orgId)
      if (f.role) q = q.where('role', '=', f.role)
      if (f.status) q = q.where('status', '=', f.status)
      for (const c of seekConditions(KEY, seek)) q = q.where(c)
      const rows = await q.orderBy('created_at').orderBy('id').offset(seek.skip).limit(limit).execute()
      return rows.map(({ at, ...row }) => ({ row, key: { at, id: row.id } }))
    },
  })
  return { rows: shown.map((r) => r.row), ...listed }
}

/** Another active user of the organization with this e-mail (case-insensitive), if any. */
export const emailTaken = async (db: Kysely<ReadModelDatabase>, orgId: string, email: string, exceptUserId?: string): Promise<boolean> => {
  let q = db.selectFrom('users').select('id').where('organization_id', '=', orgId).where('status', '=', 'active')
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
  if (exceptUserId) q = q.where('id', '!=', exceptUserId)
  return (await q.executeTakeFirst()) !== undefined
}
