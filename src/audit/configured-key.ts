import { existsSync, readFileSync } from 'node:fs'
import type { Config } from '../config.js'
import { type NotaryKey, notaryKeyFrom } from './tree-head.js'

export const GENERATED_KEY_FILE = 'notary-key.pem'

/** A notary key and where it was found, so that a tool run with another environment than the server's can say which key it used. */
export interface ConfiguredNotaryKey extends NotaryKey {
  /** `NOTARY_KEY`, `NOTARY_KEY_FILE /run/secrets/notary`, `DATA_DIR /var/lib/shipping/notary-key.pem`. */
  source: string
}

/**
 * The notary key as the server finds it (NOTARY_KEY, or the file NOTARY_KEY_FILE names: the
 * configuration reads it, else the one generated into DATA_DIR), without generating one: a command
 * line tool must not mint a key the server never used.
 */
export function configuredNotaryKey(config: Config): ConfiguredNotaryKey | undefined {
  if (config.notaryKey) {
    const source = config.notaryKeyFile ? `NOTARY_KEY_FILE ${config.notaryKeyFile}` : 'NOTARY_KEY'
    return { ...notaryKeyFrom(config.notaryKey, source), source }
  }
  const generated = `${config.dataDir}/${GENERATED_KEY_FILE}`
  if (!existsSync(generated)) return undefined
  const source = `DATA_DIR ${generated}`
  return { ...notaryKeyFrom(readFileSync(generated, 'utf8'), source), source }
}
