/**
 * The tracking page's languages (DESIGN §3.10): the organization's locale, unless the browser's
 * `Accept-Language` prefers the other of the two (docs/decisions.md).
 */
export type TrackingLocale = 'en' | 'es'
export const TRACKING_LOCALES: readonly TrackingLocale[] = ['en', 'es']

const primary = (tag: string): TrackingLocale | null => {
  const p = tag.trim().toLowerCase().split(/[-_]/)[0]
  return p === 'en' || p === 'es' ? p : null
}

/** The first of English and Spanish the header accepts (by weight, then order); null when it names neither. */
export function acceptedLocale(header: string | string[] | undefined): TrackingLocale | null {
  const text = Array.isArray(header) ? header.join(',') : header
  if (!text || text.length > 1000) return null
  const ranges = text.split(',').slice(0, 50).map((part, i) => {
    const [tag = '', ...params] = part.split(';')
    const q = params.map((x) => /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/.exec(x)).find(Boolean)
    return { locale: primary(tag), q: q ? Number(q[1]) : 1, i }
  }).filter((r) => r.locale !== null && r.q > 0)
  ranges.sort((a, b) => b.q - a.q || a.i - b.i)
  return ranges[0]?.locale ?? null
}

export function trackingLocale(acceptLanguage: string | string[] | undefined, organizationLocale: string | null | undefined): TrackingLocale {
  return acceptedLocale(acceptLanguage) ?? primary(organizationLocale ?? '') ?? 'en'
}

/** Spanish names of the status catalog's defaults (an organization's own names win in both languages). */
export const SPANISH_STATUS_NAMES: Readonly<Record<string, string>> = {
  pending: 'Pendiente', shipped: 'Despachado', picked_up: 'Retirado', in_facility: 'En el centro de distribución',
  out_for_delivery: 'En camino', attempted_delivery: 'Intento de entrega', delivered: 'Entregado', not_delivered: 'No entregado',
  cancelled: 'Cancelado', returned: 'Devuelto',
  processing: 'En proceso', pending_preparation: 'En preparación', ready_to_ship: 'Listo para despachar', soon_deliver: 'Por llegar',
  receiver_absent: 'Destinatario ausente', bad_address: 'Dirección incorrecta', rejected: 'Rechazado por el destinatario',
  dangerous_area: 'Zona peligrosa', no_answer: 'Sin respuesta', damaged: 'Dañado', closed: 'Cerrado', other: 'Otro motivo',
  lost: 'Extraviado', expired: 'Vencido',
}
