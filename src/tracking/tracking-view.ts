import { createHash } from 'node:crypto'
import type { TrackingView } from '../../schemas/api/tracking.js'
import { catalogEntry } from '../shipments/status-catalog.js'
import type { TrackingFacts } from './tracking-facts.js'
import { SPANISH_STATUS_NAMES, type TrackingLocale } from './locale.js'

/** A status's name as the page shows it: the carrier organization's own, else the default in the page's language. */
function named(facts: TrackingFacts, code: string, locale: TrackingLocale): { code: string; name: string; color: string | null } {
  const e = catalogEntry(code, facts.overrides)
  const own = facts.overrides.get(code)?.name
  return { code, name: own ?? (locale === 'es' ? SPANISH_STATUS_NAMES[code] ?? e.name : e.name), color: e.color }
}

/** The public view (DESIGN §3.10): built field by field, so nothing of the facts leaks by accident. */
export function trackingView(facts: TrackingFacts, locale: TrackingLocale): TrackingView {
  const d = facts.delivery
  return {
    locale,
    carrier: facts.carrierName,
    status: named(facts, facts.status, locale),
    timeline: facts.history.map((h) => {
      const s = named(facts, h.status, locale)
      return { code: s.code, name: s.name, detail: h.substatus ? named(facts, h.substatus, locale).name : null, at: h.at }
    }),
    promised_delivery_at: facts.promisedDeliveryAt,
    final: facts.final,
    tracking_number: facts.trackingNumber,
    sender: facts.sender,
    time_zone: facts.timeZone,
    planned: facts.planned ? { from: facts.planned.from, to: facts.planned.to } : null,
    attempt: facts.attempt ? { reason: facts.attempt.reason, at: facts.attempt.at, next_step: facts.attempt.nextStep } : null,
    proof: facts.proof ? { at: facts.proof.at, signed_by: facts.proof.signedBy, photo: facts.proof.photo !== null } : null,
    delivery: d === null ? null : {
      stops_before: d.stopsBefore,
      eta: d.eta ? { from: d.eta.from, to: d.eta.to } : null,
      delayed: d.delayed ? { promised: { from: d.delayed.promised.from, to: d.delayed.promised.to }, late_by_minutes: d.delayed.lateByMinutes } : null,
      driver: d.driverFirstName,
      map: d.map ? { driver: { ...d.map.driver }, destination: d.map.destination ? { ...d.map.destination } : null } : null,
    },
  }
}

/** The stream's frame id of a view: the same view, the same id (a reconnect that has it gets nothing again). */
export const viewId = (json: string): string => createHash('sha256').update(json).digest('base64url').slice(0, 16)
