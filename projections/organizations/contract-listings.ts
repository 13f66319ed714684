import { sql, type Kysely } from 'kysely'

/** A contract as the projection writes it. */
export interface ContractRow { id: string; carrier_id: string; shipper_id: string; status: string; signed_at: string }

/**
 * Lists a batch's new contracts (issue 32): each active one gives the carrier a row naming the
 * shipper (`license` shipper) and the shipper one naming the carrier, with the other party's name
 * and market copied from `organizations` (both exist before a contract is signed; neither can be
 * renamed, so the copies need no upkeep). One statement: the counts move by the rows inserted only,
 * so a contract listed already counts once.
 */
export async function listContracts(db: Kysely<any>, schema: string, contracts: readonly ContractRow[]): Promise<void> {
  if (contracts.length === 0) return
  await sql`
    with listed as (
      insert into ${sql.id(schema, 'contract_listings')} (organization_id, license, counterpart_id, contract_id, name, no_market, market_sort)
      select s.organization_id, s.license, o.id, c.id, o.name, o.market is null, coalesce(o.market, '')
      from json_to_recordset(${JSON.stringify(contracts)}::json) as c(id text, carrier_id text, shipper_id text, status text)
      cross join lateral (values (c.carrier_id, 'shipper', c.shipper_id), (c.shipper_id, 'carrier', c.carrier_id)) as s(organization_id, license, counterpart_id)
      join ${sql.id(schema, 'organizations')} o on o.id = s.counterpart_id
      where c.status = 'active'
      on conflict do nothing
      returning organization_id, license
    )
    insert into ${sql.id(schema, 'contract_listing_counts')} as k (organization_id, license, n)
    select organization_id, license, count(*) from listed group by organization_id, license
    on conflict (organization_id, license) do update set n = k.n + excluded.n`.execute(db)
}
