import type { HttpModule } from '../http/module.js'
import { quoteRoutes } from './routes.js'

/** `POST /shipments/quotes` (routes API). Shipments priced at creation use `priceShipment`. */
export const quotesModule: HttpModule = {
  name: 'quotes',
  async routes(app, opts) {
    await app.register(quoteRoutes, opts)
  },
}

export { priceShipment } from './price-shipment.js'
export type { PricedQuote } from './quote-engine.js'
