import { existsSync, readFileSync } from 'node:fs'
import type { Config } from '../config.js'
import { type NotaryKey, notaryKeyFrom } from './tree-head.js'
import { HttpError } from '../http/http-error.js'

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

/**
 * NOTARY_ROLE=off: the key only when configured (read at first use, never generated); else what
 * needs it (the public key and checkpoint endpoints, webhook checkpoints) answers 503 saying why.
 */
export function configuredNotaryKeyOrUnavailable(config: Config): NotaryKey {
  const key = configuredNotaryKey(config)
  if (!key) throw new HttpError(503, 'notary_key_unavailable', 'NOTARY_ROLE=off: this process holds no notary key; give it the notary\'s (NOTARY_KEY_FILE) to serve the public key and checkpoints here')
  return key
}
