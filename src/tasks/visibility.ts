import type { ExpressionBuilder, Expression, SqlBool } from 'kysely'
import type { FastifyRequest } from 'fastify'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import { callerOf, driverOf } from '../http/plugins/auth.js'

/**
 * Who looks at tasks (DESIGN §3.9): the organization (its own token or a dispatcher's) sees all of
 * its tasks; a driver the tasks assigned to it and the tasks on the routes it drives once they are
 * published (routes module): every task route follows this one condition.
 */
export interface TaskViewer {
  organizationId: string
  /** The driver's user id, or null when the viewer acts as the organization. */
  driverId: string | null
}

export const taskViewerOf = (req: FastifyRequest): TaskViewer =>
  ({ organizationId: callerOf(req).organization.id, driverId: driverOf(req)?.id ?? null })

/** The condition a `tasks` row must meet to exist for the viewer; anything else is a 404. */
export function visibleTo(eb: ExpressionBuilder<ReadModelDatabase, 'tasks'>, viewer: TaskViewer): Expression<SqlBool> {
  const own = eb('tasks.organization_id', '=', viewer.organizationId)
  if (viewer.driverId === null) return own
  const onItsRoutes = eb('tasks.route_id', 'in', eb.selectFrom('routes').select('routes.id')
    .where('routes.driver_id', '=', viewer.driverId).where('routes.published_at', 'is not', null))
  return eb.and([own, eb.or([eb('tasks.assignee_id', '=', viewer.driverId), onItsRoutes])])
}
