import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/**
 * The driver's app is plain files in `src/driver/public` (no build step, no framework): read once at
 * start. From the compiled `dist/src/driver` the folder is the one `npm run build` copied beside it;
 * run from the sources, it is this module's own.
 */
const folder = (): string => {
  const beside = fileURLToPath(new URL('./public/', import.meta.url))
  if (existsSync(beside)) return beside
  return fileURLToPath(new URL('../../../src/driver/public/', import.meta.url))
}

export interface Asset { body: Buffer; type: string; etag: string }

const TYPES: ReadonlyMap<string, string> = new Map([
  ['app.js', 'text/javascript; charset=utf-8'],
  ['store.js', 'text/javascript; charset=utf-8'],
  ['i18n.js', 'text/javascript; charset=utf-8'],
  ['app.css', 'text/css; charset=utf-8'],
  ['sw.js', 'text/javascript; charset=utf-8'],
  ['manifest.webmanifest', 'application/manifest+json; charset=utf-8'],
  ['icon.svg', 'image/svg+xml'],
  ['icon-192.png', 'image/png'],
  ['icon-512.png', 'image/png'],
  ['index.html', 'text/html; charset=utf-8'],
])

/**
 * Every file, and a version: the hash of them all. The service worker names its cache by it
 * (`__VERSION__` in sw.js), so a new server's files replace the phone's copy at the next visit.
 */
export function loadAppAssets(): { assets: ReadonlyMap<string, Asset>; version: string } {
  const dir = folder()
  const raw = new Map<string, Buffer>()
  for (const name of TYPES.keys()) raw.set(name, readFileSync(`${dir}${name}`))
  const all = createHash('sha256')
  for (const [name, body] of raw) all.update(name).update(body)
  const version = all.digest('hex').slice(0, 16)
  const assets = new Map<string, Asset>()
  for (const [name, body0] of raw) {
    const body = name === 'sw.js' ? Buffer.from(body0.toString('utf8').replace('__VERSION__', version)) : body0
    assets.set(name, { body, type: TYPES.get(name)!, etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 20)}"` })
  }
  return { assets, version }
}
