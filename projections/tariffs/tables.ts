import type { ColumnType } from 'kysely'
import type { TariffRatesPublished } from '../../schemas/events/tariffs.js'

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
  // As the last `TariffRatesPublished` carried them (src/tariffs reads them as its `Zone` and `Rate`).
  zones: Json<TariffRatesPublished['zones']>
  rates: Json<TariffRatesPublished['rates']>
  active: boolean
  rates_published_at: TsNull
  activated_at: TsNull
  created_at: Ts
  updated_at: Ts
}

export interface TariffsTables {
  tariffs: TariffsTable
}
