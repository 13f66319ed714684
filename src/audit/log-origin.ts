import type { Config } from '../config.js'

/**
 * The log's origin line: AUDIT_ORIGIN, else the public address's host and path with `/audit`
 * (`shipping.example.com/audit`, the schema-less URL tlog-checkpoint recommends), else a fixed
 * name for a deployment that has no public address.
 */
export function auditOriginOf(config: Pick<Config, 'auditOrigin' | 'publicBaseUrl'>): string {
  if (config.auditOrigin) return config.auditOrigin
  if (config.publicBaseUrl) {
    const url = new URL(config.publicBaseUrl)
    return `${url.host}${url.pathname.replace(/\/+$/, '')}/audit`
  }
  return 'shipping-platform/audit'
}
