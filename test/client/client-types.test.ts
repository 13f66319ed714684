import { execFile } from 'node:child_process'
import { copyFileSync, existsSync, readFileSync, rmSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { CLIENT_TYPES_FILE, clientTypes } from '../../infra/client/client-types.js'
import { build } from '../helpers/build.js'

/**
 * The typed client (schemas/client) stays the server's: its generated types are what the routes'
 * schemas give today, and the package builds. A schema change that the committed types do not
 * reflect fails here (run `npm run client:generate`); one that breaks the client's users fails
 * `tsc --noEmit`, which covers the package and test/client.
 */
const root = fileURLToPath(new URL('../../', import.meta.url))

t.test('schemas/client/openapi.ts is generated from this server\'s /openapi.json', async (t) => {
  const h = await build(t)
  const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json()
  const generated = await clientTypes(doc)
  const committed = readFileSync(CLIENT_TYPES_FILE, 'utf8')
  const firstDifference = [...generated].findIndex((c, i) => committed[i] !== c)
  t.ok(generated === committed, generated === committed ? 'up to date'
    : `schemas/client/openapi.ts is stale: run \`npm run client:generate\` (first difference at line ${generated.slice(0, firstDifference).split('\n').length})`)
  t.match(committed, /export type Shipment = components\['schemas'\]\['Shipment'\];/, 'named types are exported')
  t.match(committed, /createShipment: \{/, 'operations are named by their operationId')
})

t.test('the client package builds to JavaScript and declarations', async (t) => {
  // Inside node_modules, so the built module finds openapi-fetch as an installed package would.
  const outDir = `${root}node_modules/.cache/shipping-platform/client-build-${process.pid}`
  t.teardown(() => rmSync(outDir, { recursive: true, force: true }))
  await promisify(execFile)(`${root}node_modules/.bin/tsc`, ['-p', 'schemas/client/tsconfig.json', '--outDir', outDir], { cwd: root })
  for (const file of ['index.js', 'index.d.ts', 'openapi.d.ts']) t.ok(existsSync(`${outDir}/${file}`), file)
  // Its own package.json beside it, as installed: the module type is the package's, not the checkout's.
  copyFileSync(`${root}schemas/client/package.json`, `${outDir}/package.json`)
  const built = await import(pathToFileURL(`${outDir}/index.js`).href) as typeof import('@shipping-platform/client')
  const client = built.createClient({ baseUrl: 'http://127.0.0.1:9', token: 'sk_x' })
  t.type(client.GET, 'function')
  t.match(readFileSync(`${outDir}/index.d.ts`, 'utf8'), /export declare function createClient/)
})
