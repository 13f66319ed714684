import type { HttpModule } from '../http/module.js'
import { operationsRoutes } from '../http/operations.js'
import { createUserRoutes } from './create-user.js'
import { updateUserRoutes } from './update-user.js'
import { deactivateUserRoutes } from './deactivate-user.js'
import { readUserRoutes } from './read-users.js'
import { createSignInLinkRoutes } from './create-sign-in-link.js'
import { revokeSignInLinkRoutes } from './revoke-sign-in-link.js'
import { redeemSignInLinkRoutes } from './redeem-sign-in-link.js'

/** Dispatchers and drivers of a carrier organization (DESIGN §3.9). */
export const usersModule: HttpModule = {
  name: 'users',
  routes: operationsRoutes(createUserRoutes, updateUserRoutes, deactivateUserRoutes, readUserRoutes, createSignInLinkRoutes, revokeSignInLinkRoutes),
  /** The driver's phone trades a sign-in link's code for its token (issue 38). */
  publicRoutes: redeemSignInLinkRoutes,
}
