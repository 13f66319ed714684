import { openDatabase } from './connection.js'
import { migrateInfrastructure, migrateReadModels } from './migrate.js'
import { buildTemplate } from './pglite-template.js'

/** The install's template (pglite-template.ts): a new PGlite directory with every migration run. */
export const buildMigratedTemplate = () => buildTemplate(async (dir) => {
  const database = await openDatabase({ pgliteDir: dir, template: false })
  try {
    await migrateInfrastructure(database.db)
    await migrateReadModels(database.db)
  } finally {
    await database.close()
  }
})
