import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

// Licence policy of what ships in production (docs/decisions.md, "Licences of production
// dependencies"): the production closure of package-lock.json may hold permissive licences, public
// domain, open-data licences for data, MPL-2.0 (weak copyleft per file: we never modify its
// files) and, for the label fonts, OFL-1.1 (fonts may be embedded in documents and redistributed
// unmodified with their licence; only a modified font must keep it); no strong or library copyleft (GPL, AGPL, LGPL, SSPL, EUPL, OSL, CC-BY-SA, ...).

const ALLOWED = new Set([
  'MIT', 'MIT-0', 'ISC', 'BSD-2-Clause', 'BSD-3-Clause', 'Apache-2.0', '0BSD', 'BlueOak-1.0.0',
  'Python-2.0', 'CC0-1.0', 'CC-BY-3.0', 'CC-BY-4.0', 'Unlicense', 'ODbL-1.0', 'MPL-2.0', 'OFL-1.1',
])
/** Spellings that predate SPDX, mapped to the identifier they mean. */
const ALIASES: Record<string, string> = { 'MIT/X11': 'MIT', BSD: 'BSD-3-Clause', 'Apache 2.0': 'Apache-2.0' }
/**
 * Packages whose package.json names no licence, reviewed by hand (pinned to the version read, so
 * an upgrade is reviewed again).
 */
const REVIEWED: Record<string, string> = {
  'png-js@2.0.0': 'MIT', // its LICENSE file is the MIT licence
}

/** Whether an SPDX expression ("(MIT OR GPL-3.0) AND ISC") can be taken under the allowed licences. */
function acceptable(expression: string): boolean {
  const tokens = expression.replace(/[()]/g, ' $& ').trim().split(/\s+/)
  let at = 0
  // expr := term (OR term)* ; term := atom (AND atom)* ; atom := id | ( expr )
  const expr = (): boolean => {
    let ok = term()
    while (tokens[at] === 'OR') { at++; ok = term() || ok }
    return ok
  }
  const term = (): boolean => {
    let ok = atom()
    while (tokens[at] === 'AND') { at++; ok = atom() && ok }
    return ok
  }
  const atom = (): boolean => {
    const token = tokens[at++]
    if (token === '(') {
      const ok = expr()
      at++ // ')'
      return ok
    }
    const id = (token ?? '').replace(/\+$/, '')
    return ALLOWED.has(ALIASES[id] ?? id)
  }
  const ok = expr()
  return ok && at === tokens.length
}

interface LockEntry { version?: string, license?: unknown, dev?: boolean, link?: boolean }

const root = join(import.meta.dirname, '..', '..')

function licenceOf(path: string, entry: LockEntry): string | undefined {
  if (typeof entry.license === 'string') return entry.license
  const name = path.replace(/^.*node_modules\//, '')
  const reviewed = REVIEWED[`${name}@${entry.version}`]
  if (reviewed !== undefined) return reviewed
  try {
    const manifest = JSON.parse(readFileSync(join(root, path, 'package.json'), 'utf8')) as { license?: unknown }
    return typeof manifest.license === 'string' ? manifest.license : undefined
  } catch {
    return undefined
  }
}

/** "name@version (licence)" of each production package whose licence is not acceptable. */
function offenders(lock: { packages: Record<string, LockEntry> }): string[] {
  const out: string[] = []
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.dev === true || entry.link === true) continue
    const licence = licenceOf(path, entry)
    if (licence === undefined || !acceptable(licence)) {
      out.push(`${path.replace(/^.*node_modules\//, '')}@${entry.version ?? '?'} (${licence ?? 'no licence'})`)
    }
  }
  return out
}

t.test('the policy reads SPDX expressions: any allowed alternative of an OR, every part of an AND', async (t) => {
  for (const ok of ['MIT', '(MIT OR CC0-1.0)', '(BSD-3-Clause AND Apache-2.0)', 'MIT/X11', 'ODbL-1.0', '(GPL-2.0 OR MIT)', 'Apache-2.0+']) {
    t.ok(acceptable(ok), ok)
  }
  for (const bad of ['GPL-3.0', 'GPL-3.0-or-later', 'AGPL-3.0-only', 'LGPL-2.1', 'SSPL-1.0', 'EUPL-1.2', 'OSL-3.0',
    'CC-BY-SA-4.0', '(MIT AND GPL-3.0)', 'UNLICENSED', 'SEE LICENSE IN LICENSE.txt', '']) {
    t.notOk(acceptable(bad), bad)
  }
})

t.test('no production dependency has a copyleft or unknown licence', async (t) => {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> }
  t.ok(Object.values(lock.packages).filter((e) => e.dev !== true).length > 50, 'the production closure was read')
  t.same(offenders(lock), [], 'production packages with a licence outside the policy')
  t.same(offenders({ packages: { 'node_modules/country-state-city': { version: '3.2.1', license: 'GPL-3.0' } } }),
    ['country-state-city@3.2.1 (GPL-3.0)'], 'an offender is named with its version and licence')
})

t.test('the project itself is MIT, with the LICENSE file package.json names', async (t) => {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { license?: string }
  t.equal(manifest.license, 'MIT')
  t.match(readFileSync(join(root, 'LICENSE'), 'utf8'), /^MIT License\n\nCopyright/)
})
