/**
 * shipment_listings and shipment_listing_counts (issue 32), derived from each changed shipment's
 * row before and after a batch: the listing rows to upsert and the count deltas, summed per
 * (organization, status, day) so the batch writes each table with one statement. Deltas depend only
 * on the before and after of the batch, not on its boundaries: a rebuild gives the same counts.
 */

/** What of a shipment row the listings hold. */
export interface ListedFields {
  id: number; shipper_id: string; carrier_id: string; status: string; created_at: string; external_reference: string | null
}

export interface ListingRow { org_id: string; shipment_id: number; status: string; created_at: string; external_reference: string | null }
export interface CountDelta { org_id: string; status: string; day: string; n: number }

/** The organizations that list a shipment: its shipper, and its carrier when that is another organization. */
export const viewersOf = (r: Pick<ListedFields, 'shipper_id' | 'carrier_id'>): string[] =>
  r.carrier_id === r.shipper_id ? [r.shipper_id] : [r.shipper_id, r.carrier_id]

/** The UTC day of an instant, as the counts key it ('YYYY-MM-DD'). */
export const utcDay = (at: string): string => new Date(at).toISOString().slice(0, 10)

export const listedFieldsOf = (r: ListedFields): ListedFields => ({
  id: r.id, shipper_id: r.shipper_id, carrier_id: r.carrier_id, status: r.status, created_at: r.created_at, external_reference: r.external_reference,
})

const sameListing = (a: ListedFields, b: ListedFields) =>
  a.status === b.status && Date.parse(a.created_at) === Date.parse(b.created_at) && a.external_reference === b.external_reference
  && a.shipper_id === b.shipper_id && a.carrier_id === b.carrier_id

/**
 * The listing upserts and count deltas of a batch: `before` is each shipment's row as the batch
 * found it (absent: created in the batch), `after` its row once folded.
 */
export function listingChanges(before: ReadonlyMap<number, ListedFields>, after: Iterable<ListedFields>) {
  const listings: ListingRow[] = []
  const deltas = new Map<string, CountDelta>()
  const add = (r: ListedFields, n: number) => {
    const day = utcDay(r.created_at)
    for (const org of viewersOf(r)) {
      const key = `${org}\u0000${r.status}\u0000${day}`
      const d = deltas.get(key)
      if (d) d.n += n
      else deltas.set(key, { org_id: org, status: r.status, day, n })
    }
  }
  for (const r of after) {
    const was = before.get(r.id)
    if (was && sameListing(was, r)) continue
    for (const org of viewersOf(r)) {
      listings.push({ org_id: org, shipment_id: r.id, status: r.status, created_at: r.created_at, external_reference: r.external_reference })
    }
    if (was) add(was, -1)
    add(r, +1)
  }
  const counts = [...deltas.values()].filter((d) => d.n !== 0)
  return { listings, counts, lowered: counts.filter((d) => d.n < 0) }
}
