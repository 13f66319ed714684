import type { Selectable, Kysely } from 'kysely'
import type { User } from '../../schemas/api/users.js'
import type { UsersTable } from '../../projections/users/tables.js'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import type { PageRequest } from '../http/pagination.js'
import { iso } from '../shared/rows.js'

type UserRow = Selectable<UsersTable>


export const toUser = (r: UserRow): User => ({
  id: r.id, name: r.name, email: r.email, phone: r.phone, role: r.role, status: r.status,
  created_at: iso(r.created_at), updated_at: iso(r.updated_at), deactivated_at: r.deactivated_at === null ? null : iso(r.deactivated_at),
})

/** A user of the organization, or undefined (another organization's users are unknown). */
export const findUser = (db: Kysely<ReadModelDatabase>, orgId: string, userId: string) =>
  db.selectFrom('users').selectAll().where('id', '=', userId).where('organization_id', '=', orgId).executeTakeFirst()

export async function listUsers(db: Kysely<ReadModelDatabase>, orgId: string, f: { role?: UserRow['role'] | undefined; status?: UserRow['status'] | undefined }, page: PageRequest) {
  let q = db.selectFrom('users').where('organization_id', '=', orgId)
  if (f.role) q = q.where('role', '=', f.role)
  if (f.status) q = q.where('status', '=', f.status)
  const [rows, count] = await Promise.all([
    q.selectAll().orderBy('created_at').orderBy('id').limit(page.perPage).offset((page.page - 1) * page.perPage).execute(),
    q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}

/** Another active user of the organization with this e-mail (case-insensitive), if any. */
export const emailTaken = async (db: Kysely<ReadModelDatabase>, orgId: string, email: string, exceptUserId?: string): Promise<boolean> => {
  let q = db.selectFrom('users').select('id').where('organization_id', '=', orgId).where('status', '=', 'active')
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
  if (exceptUserId) q = q.where('id', '!=', exceptUserId)
  return (await q.executeTakeFirst()) !== undefined
}
