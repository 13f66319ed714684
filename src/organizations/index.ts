import type { HttpModule } from '../http/module.js'
import { adminRoutes as createOrganizationRoute } from './create-organization.js'
import { adminOrganizationRoutes } from './admin-organizations.js'
import { myOrganizationRoutes } from './my-organization.js'
import { addPlaceRoutes } from './add-place.js'

export const organizationsModule: HttpModule = {
  name: 'organizations',
  async routes(app, opts) {
    await app.register(myOrganizationRoutes, opts)
    await app.register(addPlaceRoutes, opts)
  },
  async adminRoutes(app, opts) {
    await app.register(createOrganizationRoute, opts)
    await app.register(adminOrganizationRoutes, opts)
  },
}
