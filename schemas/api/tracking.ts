import { Type, type Static } from 'typebox'
import { Nullable } from './common.js'

// Public tracking (DESIGN §3.10): what `/track/<token>/data` answers and `/track/<token>/stream`
// sends as its `tracking` frames. Everything here may be shown to whoever holds the link, and
// nothing else is in it: no address, recipient, phone, internal id or full driver name.

const Instant = Type.String({ format: 'date-time' })
const Point = Type.Object({ lat: Type.Number(), lng: Type.Number() }, { title: 'TrackingPoint' })

export const TrackingStatus = Type.Object({
  code: Type.String(),
  name: Type.String({ description: 'the carrier organization\'s name for it, in the page\'s language where it has none' }),
  color: Nullable(Type.String()),
}, { title: 'TrackingStatus' })

export const TrackingView = Type.Object({
  locale: Type.Union([Type.Literal('en'), Type.Literal('es')]),
  carrier: Type.String({ description: 'the carrier\'s name' }),
  status: TrackingStatus,
  timeline: Type.Array(Type.Object({
    code: Type.String(), name: Type.String(), detail: Nullable(Type.String({ description: 'the substatus\'s name' })), at: Instant,
  }, { title: 'TrackingTimelineItem' })),
  promised_delivery_at: Nullable(Instant),
  final: Type.Boolean({ description: 'delivered, not delivered, returned or cancelled' }),
  tracking_number: Type.String({ description: 'the carrier\'s tracking number, else the platform\'s control number' }),
  sender: Type.String({ description: 'who sent it: the merchant, else the shipper organization' }),
  time_zone: Type.String({ description: 'the IANA time zone the page shows times in: the carrier organization\'s' }),
  planned: Nullable(Type.Object({ from: Instant, to: Instant }, { title: 'TrackingPlannedWindow', description: 'the delivery\'s planned time window (the next not over, else the last)' })),
  attempt: Nullable(Type.Object({
    reason: Type.String({ description: 'no_answer, bad_address, rejected, damaged, closed or other' }),
    at: Nullable(Instant),
    next_step: Nullable(Type.String({ description: 'what the carrier says happens next (its text for the reason); null: the page\'s own' })),
  }, { title: 'TrackingAttempt', description: 'the latest delivery attempt failed' })),
  proof: Nullable(Type.Object({
    at: Nullable(Instant),
    signed_by: Nullable(Type.String()),
    photo: Type.Boolean({ description: 'a proof photo is at `<page>/photo` (only when the carrier shows photos publicly)' }),
  }, { title: 'TrackingProof', description: 'the delivery was completed' })),
  delivery: Nullable(Type.Object({
    stops_before: Type.Integer({ minimum: 0, description: 'stops the driver makes before this one' }),
    eta: Nullable(Type.Object({ from: Instant, to: Instant }, { title: 'TrackingEtaWindow' })),
    delayed: Nullable(Type.Object({
      promised: Type.Object({ from: Instant, to: Instant }, { description: 'the window shown before: the planned one, else the first ETA' }),
      late_by_minutes: Type.Integer({ minimum: 1 }),
    }, { title: 'TrackingDelay', description: 'the ETA moved past the window shown before' })),
    driver: Nullable(Type.String({ description: 'the driver\'s first name' })),
    map: Nullable(Type.Object({
      driver: Type.Object({ lat: Type.Number(), lng: Type.Number(), recorded_at: Instant }),
      destination: Nullable(Point),
    }, { title: 'TrackingMap', description: 'only while this stop is the next one' })),
  }, { title: 'TrackingDelivery', description: 'once the delivery is on a started route' })),
}, { title: 'TrackingView' })
export type TrackingView = Static<typeof TrackingView>

export const TrackingTokenParams = Type.Object({ token: Type.String({ maxLength: 512 }) }, { title: 'TrackingTokenParams' })
