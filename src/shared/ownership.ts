import { NotFoundError } from './errors.js'

/**
 * A command may touch an aggregate only in its own organization: another tenant's is as unknown as
 * one that does not exist (404, never 403, so ids of other tenants reveal nothing).
 */
export function requireOwned<S extends { exists: boolean; organizationId: string | null }>(
  state: S, organizationId: string, what: string,
): asserts state is S & { organizationId: string } {
  if (!state.exists || state.organizationId !== organizationId) throw new NotFoundError(what)
}
