import { PositionsAccepted, ReportPositionsBody, MAX_POSITION_AGE_MS, MAX_POSITION_AHEAD_MS } from '../../schemas/api/positions.js'
import { errorResponses } from '../../schemas/api/common.js'
import { ForbiddenError } from '../shared/errors.js'
import { callerOf, driverOf } from '../http/plugins/auth.js'
import { fieldChecks } from '../http/plugins/validation.js'
import type { RoutesPlugin } from '../http/module.js'
import type { FastifyRequest } from 'fastify'
import type { Platform } from '../platform.js'
import { insertPositions } from './positions-table.js'

/**
 * `POST /drivers/me/positions` (DESIGN §3.10): a driver's app reports where it has been, in batches.
 * Telemetry, not an event: no stream is read or written, nothing is looked up beyond the (cached)
 * token; one INSERT per batch, then a NOTIFY (coalesced per process) that wakes the ETA engine of every process.
 */
export const reportPositionsRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/drivers/me/positions', {
    config: { drivers: true },
    // The caller is checked before the body: a dispatcher's or the organization's token is refused whatever it sends.
    preValidation: [requireDriver, fieldChecks((body, errors) => {
      if (!Array.isArray(body.positions)) return
      const now = platform.clock().getTime()
      body.positions.forEach((p: unknown, i: number) => {
        const at = typeof p === 'object' && p !== null && 'recorded_at' in p ? p.recorded_at : undefined
        if (typeof at !== 'string') return
        const t = Date.parse(at)
        if (Number.isNaN(t)) return // the schema's date-time format names it
        if (t > now + MAX_POSITION_AHEAD_MS) errors.add(`positions.${i}.recorded_at`, 'The recorded at is in the future (more than 1 minute ahead of the server\'s clock).')
        else if (t < now - MAX_POSITION_AGE_MS) errors.add(`positions.${i}.recorded_at`, 'The recorded at is too old (more than 24 hours ago).')
      })
    })],
    schema: {
      tags: ['drivers'],
      summary: 'Report the driver\'s positions (a driver\'s token; 1–500 a call); they feed the ETAs of its started routes',
      body: ReportPositionsBody, response: { 202: PositionsAccepted, ...errorResponses },
    },
  }, async (req, reply) => {
    const driver = driverOf(req)!
    const receivedAt = platform.clock()
    const accepted = await storePositions(platform, req, req.body, driver.id, receivedAt)
    return reply.code(202).send({ accepted, received_at: receivedAt.toISOString() })
  })
}

async function requireDriver(req: FastifyRequest): Promise<void> {
  if (!driverOf(req)) throw new ForbiddenError('Only a driver\'s token reports positions (they are the driver\'s own).', 'driver_token_required')
}

const storePositions = (platform: Platform, req: FastifyRequest, body: ReportPositionsBody, driverId: string, receivedAt: Date) =>
  insertPositions(platform.db, {
    organizationId: callerOf(req).organization.id, driverId, receivedAt, positions: body.positions,
  })
