import { existsSync, readFileSync } from 'node:fs'
import type { Config } from '../config.js'
import { type NotaryKey, notaryKeyFrom } from './tree-head.js'

export const GENERATED_KEY_FILE = 'notary-key.pem'

/**
 * The notary key as the server finds it (NOTARY_KEY, or the file NOTARY_KEY_FILE names: the
 * configuration reads it, else the one generated into DATA_DIR), without generating one: a command
 * line tool must not mint a key the server never used.
 */
export function configuredNotaryKey(config: Config): NotaryKey | undefined {
  if (config.notaryKey) return notaryKeyFrom(config.notaryKey, 'NOTARY_KEY')
  const generated = `${config.dataDir}/${GENERATED_KEY_FILE}`
  return existsSync(generated) ? notaryKeyFrom(readFileSync(generated, 'utf8'), generated) : undefined
}
