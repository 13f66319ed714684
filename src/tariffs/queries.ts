import type { Kysely } from 'kysely'
import type { Tariff } from '../../schemas/api/tariffs.js'
import type { TariffsTable } from '../../projections/tariffs/tables.js'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import { NotFoundError } from '../shared/errors.js'
import { isoOrNull, json } from '../shared/rows.js'

type TariffRow = Pick<TariffsTable, 'id' | 'name' | 'currency' | 'volumetric_divisor' | 'active'> & {
  service_type_id: number; zones: unknown; rates: unknown
  rates_published_at: Date | null; activated_at: Date | null; created_at: Date; updated_at: Date
  st_code: string; st_name: string
}


export function toTariff(r: TariffRow): Tariff {
  return {
    id: r.id, name: r.name, currency: r.currency,
    service_type: { id: Number(r.service_type_id), code: r.st_code, name: r.st_name },
    volumetric_divisor: Number(r.volumetric_divisor),
    status: r.active ? 'active' : r.activated_at ? 'inactive' : 'draft',
    zones: json(r.zones) ?? [], rates: json(r.rates) ?? [],
    rates_published_at: isoOrNull(r.rates_published_at), activated_at: isoOrNull(r.activated_at),
    created_at: isoOrNull(r.created_at)!, updated_at: isoOrNull(r.updated_at)!,
  }
}

const base = (db: Kysely<ReadModelDatabase>) => db.selectFrom('tariffs as t')
  .innerJoin('service_types as s', 's.id', 't.service_type_id')
  .select(['t.id', 't.name', 't.currency', 't.volumetric_divisor', 't.active', 't.service_type_id', 't.zones', 't.rates',
    't.rates_published_at', 't.activated_at', 't.created_at', 't.updated_at', 's.code as st_code', 's.name as st_name'])

export async function tariffOf(db: Kysely<ReadModelDatabase>, carrierId: string, id: string): Promise<Tariff> {
  const row = await base(db).where('t.id', '=', id).where('t.carrier_id', '=', carrierId).executeTakeFirst()
  if (!row) throw new NotFoundError('Tariff')
  return toTariff(row)
}

export async function tariffsOf(db: Kysely<ReadModelDatabase>, carrierId: string): Promise<Tariff[]> {
  const rows = await base(db).where('t.carrier_id', '=', carrierId).orderBy('t.created_at').orderBy('t.id').execute()
  return rows.map((r) => toTariff(r))
}

/** The active tariff of each service type given (quotes). */
export async function activeTariffs(db: Kysely<ReadModelDatabase>, serviceTypeIds: number[]) {
  if (serviceTypeIds.length === 0) return new Map<number, ActiveTariff>()
  const rows = await db.selectFrom('tariffs')
    .select(['id', 'service_type_id', 'currency', 'volumetric_divisor', 'zones', 'rates'])
    .where('service_type_id', 'in', serviceTypeIds).where('active', '=', true).execute()
  return new Map(rows.map((r) => [Number(r.service_type_id), {
    id: r.id, currency: r.currency, volumetricDivisor: Number(r.volumetric_divisor), zones: json(r.zones) ?? [], rates: json(r.rates) ?? [],
  } as ActiveTariff]))
}

export interface ActiveTariff {
  id: string
  currency: string
  volumetricDivisor: number
  zones: import('./zones.js').Zone[]
  rates: import('./pricing.js').Rate[]
}
