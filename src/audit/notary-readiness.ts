import type { Kysely } from 'kysely'
import type { ReadinessCheck } from '../http/routes/health.js'
import { READY_FIGURES_WAIT_MS } from '../http/health-monitor.js'
import { Sampled } from '../shared/sampled.js'
import { type NotaryFigures, notaryFigures } from './notary-watch.js'
import type { WitnessingState } from './witness/witnessing.js'

const round = (x: number) => Math.round(x * 1000) / 1000

/**
 * `/ready`'s `notary` check and its `/metrics` gauges, from the database (whichever process seals):
 * `degraded` once an event has waited longer than `lagSeconds` to be sealed (the lease taken by a
 * process that seals nothing, a notary that refuses, none running at all), with the figures that
 * say which. Never an error: requests are served meanwhile; the lag is the alarm. Read as the
 * health monitor reads its figures (a Sampled probe), so a slow database cannot hold `/ready` up.
 * The witnesses' answers live only in the process whose notary asked them (`witnessing`): there a
 * refusal degrades `/ready` at once, with its reason, and their figures join `/metrics`.
 */
export function notaryReadiness(db: Kysely<any>, lagSeconds: number, witnessing: () => WitnessingState | undefined = () => undefined): ReadinessCheck {
  const figures = new Sampled(() => notaryFigures(db), { timeoutMs: 5000, freshMs: 250 })
  const read = async (): Promise<{ f: NotaryFigures | undefined; error?: string }> => {
    const r = await figures.read(READY_FIGURES_WAIT_MS)
    return r.ok ? { f: r.value } : { f: r.lastOk?.value, error: r.error }
  }
  return {
    name: 'notary',
    async check() {
      const { f, error } = await read()
      const problems: string[] = []
      if (error) problems.push(`figures not read: ${error}`)
      if (f && f.lagSeconds > lagSeconds) {
        problems.push(`${f.lagEvents} events not sealed, the oldest for ${Math.round(f.lagSeconds)} s (AUDIT_READY_LAG_SECONDS=${lagSeconds}): `
          + (f.leaseHeld ? `the lease is held by ${f.owner ?? '?'}, which seals nothing` : 'no notary holds the lease'))
        if (f.lastRefusal) problems.push(`the notary refused ${f.refusals} time(s), last at ${f.lastRefusalAt}: ${f.lastRefusal}`)
      }
      const w = witnessing()
      if (w?.refused) problems.push(`a witness refuses this tree, so the notary signs nothing: ${w.refused}`)
      return {
        ...(problems.length ? { status: 'degraded', message: problems.join('; ') } : {}),
        ...(f ? {
          sealed_size: f.sealedSize, lag_events: f.lagEvents, lag_seconds: round(f.lagSeconds), head_size: f.headSize,
          head_age_seconds: f.headAgeSeconds === null ? null : round(f.headAgeSeconds), lease_held: f.leaseHeld, refusals: f.refusals,
          ...(f.lastRefusal ? { last_refusal: f.lastRefusal, last_refusal_at: f.lastRefusalAt } : {}),
        } : {}),
        ...(w ? {
          witness_cosigned_size: w.cosignedSize ?? null,
          witness_round_trip_seconds: w.roundTripMs === undefined ? null : round(w.roundTripMs / 1000),
          ...(w.refused ? { witness_refused: w.refused } : {}),
          ...(w.unavailable ? { witness_unavailable: w.unavailable } : {}),
        } : {}),
      }
    },
    async gauges() {
      const { f } = await read()
      const w = witnessing()
      const witnessGauges = w ? [
        { name: 'audit_witness_cosigned_size', help: 'Tree size the configured witnesses last all cosigned (-1: none yet, in this process).', value: w.cosignedSize ?? -1 },
        { name: 'audit_witness_round_trip_seconds', help: 'The last round trip to every witness for one checkpoint (-1: none yet).', value: w.roundTripMs === undefined ? -1 : w.roundTripMs / 1000 },
        { name: 'audit_witness_refused', help: 'Whether a witness (or the cosigned checkpoint) refuses the current tree (1): the notary signs nothing.', value: w.refused ? 1 : 0 },
        { name: 'audit_witness_unavailable', help: 'Whether a witness could not be asked at the last try (1): heads wait.', value: w.unavailable ? 1 : 0 },
      ] : []
      if (!f) return witnessGauges
      return [...witnessGauges,
        { name: 'audit_notary_sealed_size', help: 'Leaves the notary sealed into the audit tree.', value: f.sealedSize },
        { name: 'audit_notary_lag_events', help: 'Events committed and not yet sealed.', value: f.lagEvents },
        { name: 'audit_notary_lag_seconds', help: 'How long the oldest unsealed event has waited (0: none).', value: f.lagSeconds },
        { name: 'audit_notary_head_age_seconds', help: 'Age of the latest signed tree head (-1: none signed).', value: f.headAgeSeconds ?? -1 },
        { name: 'audit_notary_lease_held', help: 'Whether some process holds the notary\'s lease (1) or none does (0).', value: f.leaseHeld ? 1 : 0 },
        { name: 'audit_notary_refusals', help: 'Times the notary refused to seal over an altered store (all processes, since the tables were made).', value: f.refusals },
      ]
    },
  }
}
