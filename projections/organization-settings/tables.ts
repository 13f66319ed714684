import type { ColumnType } from 'kysely'

type Ts = ColumnType<Date, Date | string, Date | string>
type Json<T> = ColumnType<T, string, string>

/**
 * An organization's display settings (issue 37), one row once it changed any: the time zone its
 * pages show times in (null: from its country), the text a recipient reads after a failed delivery
 * attempt per failure reason, and whether proof-of-delivery photos show on public tracking pages.
 */
export interface OrganizationSettingsTable {
  organization_id: string
  time_zone: string | null
  delivery_attempt_messages: Json<Record<string, string>>
  public_proof_photos: boolean
  updated_at: Ts
}

export interface OrganizationSettingsTables {
  organization_settings: OrganizationSettingsTable
}
