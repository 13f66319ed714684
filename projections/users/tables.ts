import type { ColumnType } from 'kysely'

type Ts = ColumnType<Date, Date | string, Date | string>
type TsNull = ColumnType<Date | null, Date | string | null, Date | string | null>

/** Dispatchers and drivers; their tokens are rows of `access_tokens` (kind `user`, subject = user id). */
export interface UsersTable {
  id: string
  organization_id: string
  name: string
  email: string
  phone: string | null
  role: 'dispatcher' | 'driver'
  status: 'active' | 'deactivated'
  created_at: Ts
  updated_at: Ts
  deactivated_at: TsNull
}

/** An organization's users per (role, status): the listing's `meta.total` under each filter (issue 32). */
export interface UserListingCountsTable {
  organization_id: string
  role: string
  status: string
  n: ColumnType<string, number | string, number | string>
}

export interface UsersTables {
  user_listing_counts: UserListingCountsTable
  users: UsersTable
}
