import type { HttpModule } from '../http/module.js'
import { tariffRoutes } from './routes.js'

/** Tariffs of the carrier API (DESIGN §3.5). */
export const tariffsModule: HttpModule = {
  name: 'tariffs',
  async carrierRoutes(app, opts) {
    await app.register(tariffRoutes, opts)
  },
}
