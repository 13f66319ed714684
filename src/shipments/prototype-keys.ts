import type { FastifyRequest } from 'fastify'
import { ValidationError } from '../shared/errors.js'

/**
 * A body key named like an Object.prototype member (`valueOf`, `constructor`, `toString`, …)
 * collides with the plain objects the shared error collectors use (`errors[path] ??= []` finds
 * the inherited function) and turned a 422 into a 500. Until those collectors use
 * null-prototype maps, the shipment routes answer such keys here, as unknown fields.
 */
export async function rejectPrototypeKeys(req: FastifyRequest): Promise<void> {
  const body = req.body
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return
  const bad = Object.keys(body).filter((k) => k in Object.prototype)
  if (!bad.length) return
  const errors: Record<string, string[]> = Object.create(null)
  for (const k of bad) errors[k] = [`The ${k} field is not allowed.`]
  throw new ValidationError(errors)
}
