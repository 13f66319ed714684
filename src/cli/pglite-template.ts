/**
 * `npm run pglite:template`, also run by npm's `prepare` on `npm ci`: makes the migrated, empty
 * embedded database that a first `npm start` copies (src/infrastructure/database/pglite-template.ts).
 * Never fails: without it the first start creates the database itself, only slower.
 */
import { buildMigratedTemplate } from '../infrastructure/database/migrated-template.js'
import { stackOf } from '../shared/thrown.js'

const started = performance.now()
try {
  const r = await buildMigratedTemplate()
  process.stdout.write(`embedded database template ${r.built ? 'built' : 'up to date'}: ${r.path} (${(performance.now() - started).toFixed(0)} ms)\n`)
} catch (err) {
  process.stderr.write(`warning: embedded database template not built: ${stackOf(err)}\n`)
}
process.exitCode = 0
