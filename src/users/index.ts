import type { HttpModule } from '../http/module.js'
import { operationsRoutes } from '../http/operations.js'
import { createUserRoutes } from './create-user.js'
import { updateUserRoutes } from './update-user.js'
import { deactivateUserRoutes } from './deactivate-user.js'
import { readUserRoutes } from './read-users.js'

/** Dispatchers and drivers of a carrier organization (DESIGN §3.9). */
export const usersModule: HttpModule = {
  name: 'users',
  routes: operationsRoutes(createUserRoutes, updateUserRoutes, deactivateUserRoutes, readUserRoutes),
}
