import { QuoteBody, QuotesResponse } from '../../schemas/api/quotes.js'
import { errorResponses } from '../../schemas/api/common.js'
import { ErrorBag, ValidationError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import type { RoutesPlugin } from '../http/module.js'
import { offeredServiceTypes } from '../carriers/availability.js'
import { quoteServiceTypes, toQuote } from './quote-engine.js'
import { resolveQuoteAddress, resolveQuotePackages } from './quote-inputs.js'

export const quoteRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/shipments/quotes', {
    schema: {
      tags: ['shipments'],
      summary: 'Quote a shipment: one price per service type available for the counterpart',
      body: QuoteBody,
      response: { 200: QuotesResponse, ...errorResponses },
    },
  }, async (req, reply) => {
    // The callbacks' 500 ms count from the request's arrival, so the whole answer stays near it
    // (work queued before the callbacks, under load, comes out of the callbacks' time).
    const deadline = performance.now() - reply.elapsedTime + platform.config.quoteTimeoutMs
    const org = organizationOf(req)
    const body = req.body
    const bag = new ErrorBag()
    const [origin, destination, packages] = await Promise.all([
      resolveQuoteAddress(platform, org.id, body.origin, 'origin', bag),
      resolveQuoteAddress(platform, org.id, body.destination, 'destination', bag),
      resolveQuotePackages(platform, org.id, body.packages, bag),
    ])
    let offered: Awaited<ReturnType<typeof offeredServiceTypes>> = []
    try {
      offered = await offeredServiceTypes(platform, org, body)
    } catch (err) {
      if (err instanceof ValidationError) bag.merge('', err.errors)
      else throw err
    }
    bag.throwIfAny()
    const quotes = await quoteServiceTypes(platform, offered, { origin: origin!, destination: destination!, packages, declared_value: body.declared_value ?? null }, deadline)
    return { quotes: quotes.map(toQuote) }
  })
}
