import type { Kysely } from 'kysely'
import type { ReadinessCheck } from '../http/routes/health.js'
import { READY_FIGURES_WAIT_MS } from '../http/health-monitor.js'
import { Sampled } from '../shared/sampled.js'
import { type NotaryFigures, notaryFigures } from './notary-watch.js'

const round = (x: number) => Math.round(x * 1000) / 1000

/**
 * `/ready`'s `notary` check and its `/metrics` gauges, from the database (whichever process seals):
 * `degraded` once an event has waited longer than `lagSeconds` to be sealed (the lease taken by a
 * process that seals nothing, a notary that refuses, none running at all), with the figures that
 * say which. Never an error: requests are served meanwhile; the lag is the alarm. Read as the
 * health monitor reads its figures (a Sampled probe), so a slow database cannot hold `/ready` up.
 */
export function notaryReadiness(db: Kysely<any>, lagSeconds: number): ReadinessCheck {
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
      return {
        ...(problems.length ? { status: 'degraded', message: problems.join('; ') } : {}),
        ...(f ? {
          sealed_size: f.sealedSize, lag_events: f.lagEvents, lag_seconds: round(f.lagSeconds), head_size: f.headSize,
          head_age_seconds: f.headAgeSeconds === null ? null : round(f.headAgeSeconds), lease_held: f.leaseHeld, refusals: f.refusals,
          ...(f.lastRefusal ? { last_refusal: f.lastRefusal, last_refusal_at: f.lastRefusalAt } : {}),
        } : {}),
      }
    },
    async gauges() {
      const { f } = await read()
      if (!f) return []
      return [
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
