import type { Kysely } from 'kysely'
import type { Static } from 'typebox'
import type { EventHistory } from '../../schemas/api/audit.js'
import type { EventStore } from '../infrastructure/event-store/event-store.js'
import { readingThrough } from '../infrastructure/event-store/read-through.js'
import { provenHistory } from './history.js'
import { Notary } from './notary.js'
import type { NotaryKey } from './tree-head.js'
import type { Witnessing } from './witness/witnessing.js'

export const EXPORT_FORMAT = 'shipping-platform/audit-history/1'

export type HistoryExport = Static<typeof EventHistory> & { format: string; exported_at: string }

/**
 * One stream's history with its proofs, as `GET …/events?proof=true` shows it, for a file an auditor
 * checks offline. With no notary running anywhere (the embedded database, server stopped), a notary
 * of this process seals the log and signs a head first, with the server's key.
 */
export async function exportHistory(db: Kysely<any>, store: EventStore, key: NotaryKey | undefined, streamId: string, witnessing?: Witnessing): Promise<HistoryExport> {
  const stored = readingThrough(store, db, { asStored: true })
  if (key) await sealWhereNobodyDoes(db, stored, key, witnessing)
  const events = await store.readStream(streamId)
  const history = await provenHistory({ db, stored, waitMs: 10_000 }, streamId, events)
  return { format: EXPORT_FORMAT, exported_at: new Date().toISOString(), ...history }
}

/** Seals and signs up to the head of the log, unless another notary holds the lease (it will sign); with witnesses, only what they cosign. */
async function sealWhereNobodyDoes(db: Kysely<any>, stored: EventStore, key: NotaryKey, witnessing: Witnessing | undefined): Promise<void> {
  const notary = new Notary(db, stored, key, { name: 'main', ...(witnessing ? { witnessing } : {}) })
  notary.requestHead()
  try {
    for (;;) {
      const step = await notary.step()
      if (step === 'standby' || step === 'idle') return
      if (step === 'hidden') await new Promise((r) => setTimeout(r, 10))
    }
  } finally {
    await notary.stop()
  }
}
