import type { ColumnType } from 'kysely'
import type { Rate } from '../../src/tariffs/pricing.js'
import type { Zone } from '../../src/tariffs/zones.js'

type Ts = ColumnType<Date, Date | string, Date | string>
type TsNull = ColumnType<Date | null, Date | string | null, Date | string | null>
type Json<T> = ColumnType<T | null, string | null, string | null>

export interface TariffsTable {
  id: string
  carrier_id: string
  service_type_id: ColumnType<number, number, number>
  name: string
  currency: string
  volumetric_divisor: number
  zones: Json<Zone[]>
  rates: Json<Rate[]>
  active: boolean
  rates_published_at: TsNull
  activated_at: TsNull
  created_at: Ts
  updated_at: Ts
}

export interface TariffsTables {
  tariffs: TariffsTable
}
