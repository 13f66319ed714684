import { type Kysely, sql } from 'kysely'

/**
 * Writes a log of organization/place-like events straight into es_events (fast, for benchmarks):
 * per organization OrganizationCreated + TokenIssued on `organization-<id>` and `places` PlaceAdded
 * on `place-<id>`; every tenth organization also signs a contract. One transaction per `chunk`
 * organizations, so the log spans many transaction ids like a real one.
 */
export async function writeOrganizationLog(db: Kysely<any>, organizations: number, places = 3, chunk = 1000): Promise<number> {
  const meta = `jsonb_build_object('actor', jsonb_build_object('kind', 'admin', 'id', 'bench'), 'request_id', gen_random_uuid()::text, 'occurred_at', '2026-11-22T10:00:00.000Z')`
  for (let from = 1; from <= organizations; from += chunk) {
    const to = Math.min(organizations, from + chunk - 1)
    await db.transaction().execute(async (trx) => {
      await sql.raw(`
        insert into es_streams (stream_id, stream_type, version)
        select 'organization-org_' || k, 'organization', case when k % 10 = 0 then 3 else 2 end from generate_series(${from}, ${to}) k
        union all
        select 'place-ple_' || k || '_' || p, 'place', 1 from generate_series(${from}, ${to}) k, generate_series(1, ${places}) p`).execute(trx)
      await sql.raw(`
        insert into es_events (stream_id, stream_version, event_id, type, data, metadata)
        select stream_id, v, gen_random_uuid(), type, data, ${meta} from (
          select k, 0 as o, 'organization-org_' || k as stream_id, 1 as v, 'OrganizationCreated' as type, jsonb_build_object(
            'id', 'org_' || k, 'internal_id', k, 'name', 'Organization ' || k, 'subdomain', 'org-' || k,
            'roles', case when k % 10 = 0 then '["carrier"]'::jsonb else '["shipper"]'::jsonb end,
            'currency', 'ARS', 'locale', 'es-AR', 'timezone', 'America/Argentina/Buenos_Aires', 'market', 'Argentina',
            'carriers_enabled', k % 10 = 0, 'created_at', '2026-11-22T10:00:00.000Z') as data
          from generate_series(${from}, ${to}) k
          union all
          select k, 1, 'organization-org_' || k, 2, 'TokenIssued', jsonb_build_object(
            'token_id', 'tok_' || k, 'token_hash', md5('token' || k), 'issued_at', '2026-11-22T10:00:00.000Z')
          from generate_series(${from}, ${to}) k
          union all
          select k, 2, 'organization-org_' || k, 3, 'ContractSigned', jsonb_build_object(
            'contract_id', 'ctr_' || k, 'carrier_id', 'org_' || k, 'shipper_id', 'org_' || (k - 1), 'signed_at', '2026-11-22T10:00:00.000Z')
          from generate_series(${from}, ${to}) k where k % 10 = 0
          union all
          select k, 2 + p, 'place-ple_' || k || '_' || p, 1, 'PlaceAdded', jsonb_build_object(
            'id', 'ple_' || k || '_' || p, 'organization_id', 'org_' || k, 'org_internal_id', k, 'name', 'Depot ' || p,
            'street', 'Av. Colón', 'street_number', (100 + p)::text, 'floor', null, 'apartment', null, 'reference', null,
            'phone_raw', '0351 422-1234', 'phone', '+543514221234', 'email', 'depot' || p || '@example.com', 'zipcode', '5000',
            'city', jsonb_build_object('id', 2044, 'name', 'Córdoba'), 'state', jsonb_build_object('id', 3642, 'code', 'X', 'name', 'Córdoba'),
            'country', jsonb_build_object('id', 11, 'code', 'AR', 'name', 'Argentina'),
            'geo_latitude', -31.4 - p / 100.0, 'geo_longitude', -64.18, 'created_at', '2026-11-22T10:00:00.000Z')
          from generate_series(${from}, ${to}) k, generate_series(1, ${places}) p
        ) e order by k, o`).execute(trx)
    })
  }
  const n = await sql<{ n: number }>`select count(*)::int as n from es_events`.execute(db)
  return Number(n.rows[0]!.n)
}
