import type { HttpModule } from '../http/module.js'
import { adminRoutes as createOrganizationRoute } from './create-organization.js'
import { issueTokenRoutes } from './issue-token.js'
import { revokeTokenRoutes } from './revoke-token.js'
import { suspendOrganizationRoutes } from './suspend-organization.js'
import { unsuspendOrganizationRoutes } from './unsuspend-organization.js'
import { signContractRoutes } from './sign-contract.js'
import { myOrganizationRoutes } from './my-organization.js'
import { addPlaceRoutes } from './add-place.js'
import { updateSettingsRoutes } from './update-settings.js'

export const organizationsModule: HttpModule = {
  name: 'organizations',
  async routes(app, opts) {
    await app.register(myOrganizationRoutes, opts)
    await app.register(addPlaceRoutes, opts)
    await app.register(updateSettingsRoutes, opts)
  },
  async adminRoutes(app, opts) {
    await app.register(createOrganizationRoute, opts)
    for (const slice of [issueTokenRoutes, revokeTokenRoutes, suspendOrganizationRoutes, unsuspendOrganizationRoutes, signContractRoutes]) {
      await app.register(slice, opts)
    }
  },
}
