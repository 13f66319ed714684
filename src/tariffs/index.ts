import type { HttpModule } from '../http/module.js'
import { createTariffRoutes } from './create-tariff.js'
import { publishRatesRoutes } from './publish-rates.js'
import { activateTariffRoutes } from './activate-tariff.js'
import { readTariffRoutes } from './read-tariffs.js'

/** Tariffs of the carrier API (DESIGN §3.5). */
export const tariffsModule: HttpModule = {
  name: 'tariffs',
  async carrierRoutes(app, opts) {
    await app.register(createTariffRoutes, opts)
    await app.register(publishRatesRoutes, opts)
    await app.register(activateTariffRoutes, opts)
    await app.register(readTariffRoutes, opts)
  },
}
