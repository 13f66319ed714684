import type { HttpModule } from '../http/module.js'
import { auditRoutes } from './routes.js'
import { notaryReadiness } from './notary-readiness.js'

/** Verifiable history (issue 26): the notary's public key, signed tree heads and consistency proofs. */
export const auditModule: HttpModule = {
  name: 'audit',
  publicRoutes: auditRoutes,
  readiness: (platform) => [notaryReadiness(platform.db, platform.config.auditReadyLagSeconds, () => platform.background?.notary?.witnessing)],
}
