import type { HttpModule } from '../http/module.js'
import { createCarrierRoutes } from './create-carrier.js'
import { readCarrierRoutes, readMeRoutes } from './read-carriers.js'
import { updateCarrierRoutes, updateMeRoutes } from './update-carrier.js'
import { rotateKeysRoutes } from './rotate-keys.js'
import { certificationRoutes } from './certify-carrier.js'
import { serviceTypeRoutes } from './add-service-type.js'

/** Carrier hub (routes API), certification (admin) and the carrier's own profile (carrier API). */
export const carriersModule: HttpModule = {
  name: 'carriers',
  async routes(app, opts) {
    await app.register(createCarrierRoutes, opts)
    await app.register(readCarrierRoutes, opts)
    await app.register(updateCarrierRoutes, opts)
    await app.register(rotateKeysRoutes, opts)
    await app.register(serviceTypeRoutes, opts)
  },
  async adminRoutes(app, opts) {
    await app.register(certificationRoutes, opts)
  },
  async carrierRoutes(app, opts) {
    await app.register(readMeRoutes, opts)
    await app.register(updateMeRoutes, opts)
  },
}
