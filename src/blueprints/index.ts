import type { HttpModule } from '../http/module.js'
import { operationsRoutes } from '../http/operations.js'
import { createBlueprintRoutes } from './create-blueprint.js'
import { replaceBlueprintRoutes } from './replace-blueprint.js'
import { publishBlueprintRoutes } from './publish-blueprint.js'
import { readBlueprintRoutes } from './read-blueprints.js'

/** Versioned recipes of steps that workflows run (DESIGN §3.9). */
export const blueprintsModule: HttpModule = {
  name: 'blueprints',
  routes: operationsRoutes(createBlueprintRoutes, replaceBlueprintRoutes, publishBlueprintRoutes, readBlueprintRoutes),
}
